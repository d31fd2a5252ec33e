//! Opens many Zenoh client sessions to a router on 127.0.0.1, each declaring
//! subscriptions, and holds them open: the load of the sessions benchmark
//! (`bench/sessions.sh`), the same for weftd and zenohd.
//!
//! Usage: `open_sessions PORT SESSIONS [SUBSCRIPTIONS_PER_SESSION] [HOLD_SECONDS]`.
//! Prints `opened=N seconds=T` once every session is open and has declared its
//! subscriptions (`bench/<n>`, numbered across sessions: session `s` declares
//! `bench/<s*S>` to `bench/<s*S+S-1>` for S subscriptions per session), then keeps them
//! alive (a KeepAlive each second, everything received read and discarded every 10 ms)
//! for HOLD_SECONDS (default 10), and prints `held`. One thread, whatever the number of
//! sessions.
//!
//! Between the two, it prints `declared=N seconds=T` once the router has handled every
//! session's declarations (each session asks for the liveliness tokens on a key nothing
//! matches; the router answers its DeclareFinal after what the session sent before): a
//! router may take longer to digest declarations than the clients take to send them.

use std::io::{ErrorKind, Read};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use weft_proto::core::{Priority, WireExpr};
use weft_proto::network::{Declaration, Interest, InterestMode, InterestOptions, NetworkMessage};
use weft_testkit::raw::{send_batch, RawClient};
use weft_transport::tx::KEEP_ALIVE_BATCH;

fn arg(args: &[String], i: usize, name: &str, default: Option<u64>) -> Result<u64, String> {
    match args.get(i) {
        Some(v) => v.parse().map_err(|_| format!("{name}: not a number: {v}")),
        None => default.ok_or_else(|| format!("missing {name}")),
    }
}

/// Reads and discards what every session received.
fn drain(clients: &mut [RawClient]) -> Result<(), String> {
    let mut buf = [0u8; 64 * 1024];
    for (s, client) in clients.iter_mut().enumerate() {
        let stream = client.stream();
        loop {
            match stream.read(&mut buf) {
                Ok(0) => return Err(format!("session {s} closed by the router")),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => return Err(format!("session {s}: {e}")),
            }
        }
    }
    Ok(())
}

/// Waits until the router has handled the declarations of session `s` (see the module
/// doc), keeping the other sessions alive meanwhile; fails after `limit`.
fn confirm_declared(clients: &mut [RawClient], s: usize, limit: Duration) -> Result<(), String> {
    let interest = NetworkMessage::Interest(Interest::new(
        1,
        InterestMode::Current,
        // Zenoh routers take Current interests from clients for tokens only (a
        // liveliness get).
        InterestOptions::TOKENS,
        Some(WireExpr::key("open_sessions/confirm")),
    ));
    let client = &mut clients[s];
    client
        .stream()
        .set_nonblocking(false)
        .map_err(|e| e.to_string())?;
    client
        .send(&interest, Priority::Control)
        .map_err(|e| format!("session {s}: {e}"))?;
    let deadline = Instant::now() + limit;
    loop {
        let answered = clients[s].recv_until(
            Duration::from_millis(500),
            |m| matches!(m, NetworkMessage::Declare(d) if matches!(d.body, Declaration::Final(_))),
        );
        match answered {
            Ok(()) => break,
            Err(e) if e.kind() == ErrorKind::TimedOut && Instant::now() < deadline => {
                let (before, rest) = clients.split_at_mut(s);
                keep_alive(before)?;
                keep_alive(&mut rest[1..])?;
            }
            Err(e) => return Err(format!("session {s}: no DeclareFinal: {e}")),
        }
    }
    clients[s]
        .stream()
        .set_nonblocking(true)
        .map_err(|e| e.to_string())
}

/// Reads and discards what every session received, and sends each a KeepAlive.
fn keep_alive(clients: &mut [RawClient]) -> Result<(), String> {
    drain(clients)?;
    for (s, client) in clients.iter_mut().enumerate() {
        let stream = client.stream();
        // A 4-byte batch: the socket has room for it unless the router stopped reading.
        let _ = stream.set_nonblocking(false);
        let sent = send_batch(stream, &KEEP_ALIVE_BATCH);
        let _ = stream.set_nonblocking(true);
        sent.map_err(|e| format!("session {s}: {e}"))?;
    }
    Ok(())
}

fn run(args: &[String]) -> Result<(), String> {
    let port = u16::try_from(arg(args, 1, "PORT", None)?).map_err(|e| format!("PORT: {e}"))?;
    let sessions = arg(args, 2, "SESSIONS", None)?;
    let subscriptions = arg(args, 3, "SUBSCRIPTIONS_PER_SESSION", Some(1))?;
    let hold = Duration::from_secs(arg(args, 4, "HOLD_SECONDS", Some(10))?);
    let start = Instant::now();
    let mut clients = Vec::new();
    let mut last_keep_alive = Instant::now();
    for s in 0..sessions {
        // Opening thousands of sessions takes longer than a lease: the first ones are
        // kept alive meanwhile.
        if last_keep_alive.elapsed() >= Duration::from_secs(1) {
            keep_alive(&mut clients)?;
            last_keep_alive = Instant::now();
        }
        let mut client = RawClient::connect(port, 0xbe4c_0000_0000 + u128::from(s))
            .map_err(|e| format!("session {s}: {e:?}"))?;
        for k in 0..subscriptions {
            let id = u32::try_from(k + 1).map_err(|e| e.to_string())?;
            client
                .declare_subscriber(id, &format!("bench/{}", s * subscriptions + k))
                .map_err(|e| format!("session {s}: {e}"))?;
        }
        client
            .stream()
            .set_nonblocking(true)
            .map_err(|e| e.to_string())?;
        clients.push(client);
    }
    println!(
        "opened={sessions} seconds={:.3}",
        start.elapsed().as_secs_f64()
    );
    for s in 0..clients.len() {
        confirm_declared(&mut clients, s, Duration::from_secs(600))?;
        if last_keep_alive.elapsed() >= Duration::from_secs(1) {
            keep_alive(&mut clients)?;
            last_keep_alive = Instant::now();
        }
    }
    println!(
        "declared={sessions} seconds={:.3}",
        start.elapsed().as_secs_f64()
    );
    let until = Instant::now() + hold;
    while Instant::now() < until {
        if last_keep_alive.elapsed() >= Duration::from_secs(1) {
            keep_alive(&mut clients)?;
            last_keep_alive = Instant::now();
        } else {
            drain(&mut clients)?;
        }
        std::thread::sleep(
            Duration::from_millis(10).min(until.saturating_duration_since(Instant::now())),
        );
    }
    println!("held");
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("open_sessions: {e}");
            ExitCode::FAILURE
        }
    }
}
