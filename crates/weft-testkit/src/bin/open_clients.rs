//! Opens many weft client sessions to one router, from a few threads at once, and reports
//! how long that took: the session-establishment benchmark of `bench/tls.sh`, the same
//! clients for weftd and zenohd (over TLS, the handshakes are the router's main cost).
//!
//! Usage: `open_clients CONFIG ENDPOINT SESSIONS THREADS`. CONFIG is a JSON5 file with
//! Zenoh's keys (the TLS settings of the connecting side); each session is a client of
//! ENDPOINT, multicast scouting off. Prints `opened=N seconds=T` once every session is
//! open (they are all held open until then), and exits 1 naming the first failure.

use std::process::ExitCode;
use std::sync::Barrier;
use std::time::Instant;

use weft::{Config, Session};
use weft_proto::core::WhatAmI;

const USAGE: &str = "usage: open_clients CONFIG ENDPOINT SESSIONS THREADS";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok((opened, seconds)) => {
            println!("opened={opened} seconds={seconds:.3}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("open_clients: {e}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> Result<(usize, f64), String> {
    let [config, endpoint, sessions, threads] = args else {
        return Err(USAGE.to_string());
    };
    let sessions: usize = sessions
        .parse()
        .map_err(|_| format!("SESSIONS: not a number: {sessions}"))?;
    let threads: usize = threads
        .parse()
        .map_err(|_| format!("THREADS: not a number: {threads}"))?;
    if threads == 0 {
        return Err("THREADS: at least 1".to_string());
    }
    let (mut config, _warnings) = Config::from_file(config).map_err(|e| e.to_string())?;
    config.mode = WhatAmI::Client;
    config.multicast_scouting = false;
    config.connect = vec![endpoint.parse().map_err(|e| format!("{endpoint}: {e}"))?];
    // Every thread starts together; each holds its sessions until all are counted.
    let start = Barrier::new(threads);
    let opened = Barrier::new(threads + 1);
    let began = Instant::now();
    let results = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                let share = sessions / threads + usize::from(t < sessions % threads);
                let (config, start, opened) = (&config, &start, &opened);
                scope.spawn(move || {
                    start.wait();
                    let held: Result<Vec<Session>, String> = (0..share)
                        .map(|_| weft::open(config.clone()).map_err(|e| e.to_string()))
                        .collect();
                    opened.wait();
                    held.map(|h| h.len())
                })
            })
            .collect();
        opened.wait();
        let seconds = began.elapsed().as_secs_f64();
        let counts: Result<Vec<usize>, String> = workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err("a thread panicked".into())))
            .collect();
        counts.map(|c| (c.iter().sum(), seconds))
    });
    results
}
