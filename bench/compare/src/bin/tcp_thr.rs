//! Raw TCP baseline for throughput, standard library only: length-prefixed messages (a
//! 4-byte little-endian length, then the payload) streamed as fast as possible through
//! buffered writes (256 KiB), and read back one message at a time through a buffered reader.
//!
//! `tcp_thr recv -l 127.0.0.1:PORT [--samples N] [--rounds R] [--max-seconds S]` prints
//! `median_msgs_per_s=… payload=…` like `weft sub-thr`;
//! `tcp_thr send SIZE -e 127.0.0.1:PORT [--duration S]` sends until the duration is over
//! or the receiver leaves.
//!
//! `--seq` (both): numbered messages (`weft_bench_compare::SeqCheck`); the receiver prints
//! `seq_received=… seq_lost=… seq_max_gap_us=…` after each round. A sender with `--seq`
//! (or more than one `-e`) sends to every address given, each connection a stream of its
//! own numbered from 0 by a thread of its own, and connects again to an address whose
//! receiver left, until the duration is over.

use std::io::{BufReader, BufWriter, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_bench_compare::{
    connect_retrying as connect, measure_rounds_then, median, put_seq, Args, SeqCheck,
};

const USAGE: &str = "tcp_thr recv -l ADDR [--samples N] [--rounds R] [--max-seconds S] | \
tcp_thr send SIZE -e ADDR... [--duration S] (both take --buffer BYTES and --seq)";
/// Buffer of the writer and of the reader (`--buffer`): 256 KiB moved 8 KiB messages 20 to 30 %
/// faster than 64 KiB on loopback.
const BUFFER: usize = 256 * 1024;
const BUFFER_FLAG: &str = "--buffer";

fn main() {
    let args = Args::parse(USAGE);
    match args.positional.first().map(String::as_str) {
        Some("recv") => recv(&args),
        Some("send") => send(&args),
        _ => {
            eprintln!("usage: {USAGE}");
            std::process::exit(2);
        }
    }
}

fn recv(args: &Args) {
    let samples: u64 = args.get("--samples", 100_000);
    let rounds: u32 = args.get("--rounds", 10);
    let max_seconds: f64 = args.get("--max-seconds", 120.0);
    let addr = args.listen.first().map(|a| a.trim_start_matches("tcp/"));
    let Some(addr) = addr else {
        eprintln!("tcp_thr recv: -l ADDR is required");
        std::process::exit(2);
    };
    let listener = TcpListener::bind(addr).unwrap_or_else(|e| {
        eprintln!("tcp_thr recv: bind {addr}: {e}");
        std::process::exit(1)
    });
    let buffer: usize = args.get(BUFFER_FLAG, BUFFER);
    let count = Arc::new(AtomicU64::new(0));
    let size = Arc::new(AtomicUsize::new(0));
    let seq = args.flag("--seq").then(|| Arc::new(SeqCheck::default()));
    let (c, z, q) = (count.clone(), size.clone(), seq.clone());
    std::thread::spawn(move || {
        let Ok((stream, _)) = listener.accept() else {
            return;
        };
        let mut reader = BufReader::with_capacity(buffer, stream);
        let mut header = [0u8; 4];
        let mut body = Vec::new();
        loop {
            if reader.read_exact(&mut header).is_err() {
                return;
            }
            let len = u32::from_le_bytes(header) as usize;
            body.resize(len, 0);
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            z.store(body.len(), Ordering::Relaxed);
            if let Some(q) = &q {
                q.record(&body);
            }
            c.fetch_add(1, Ordering::Relaxed);
        }
    });
    let rates = measure_rounds_then(
        || count.load(Ordering::Relaxed),
        samples,
        rounds,
        max_seconds,
        || {
            if let Some(q) = &seq {
                println!("{}", q.line());
            }
        },
    );
    if rates.is_empty() {
        eprintln!("tcp_thr recv: no complete round");
        std::process::exit(1);
    }
    println!(
        "median_msgs_per_s={:.0} payload={}",
        median(rates),
        size.load(Ordering::Relaxed)
    );
    // Leaving closes the connection, which stops the sender.
    std::process::exit(0);
}

fn send(args: &Args) {
    let size: usize = args.positional(1, "SIZE", USAGE);
    let duration: f64 = args.get("--duration", 10.0);
    let addr = args.connect.first().map(|a| a.trim_start_matches("tcp/"));
    let Some(addr) = addr else {
        eprintln!("tcp_thr send: -e ADDR is required");
        std::process::exit(2);
    };
    let Ok(len) = u32::try_from(size) else {
        eprintln!("tcp_thr send: SIZE must fit in 32 bits");
        std::process::exit(2);
    };
    let buffer: usize = args.get(BUFFER_FLAG, BUFFER);
    if args.flag("--seq") || args.connect.len() > 1 {
        if size < 8 {
            eprintln!("tcp_thr send: --seq needs SIZE of 8 bytes or more");
            std::process::exit(2);
        }
        let deadline = Instant::now() + Duration::from_secs_f64(duration);
        let threads: Vec<_> = args
            .connect
            .iter()
            .map(|a| {
                let addr = a.trim_start_matches("tcp/").to_string();
                std::thread::spawn(move || send_numbered(&addr, size, len, buffer, deadline))
            })
            .collect();
        let sent: u64 = threads.into_iter().map(|t| t.join().unwrap_or(0)).sum();
        println!("sent={sent} payload={size}");
        return;
    }
    let mut writer = BufWriter::with_capacity(buffer, connect(addr));
    let payload = vec![0xA5u8; size];
    let deadline = Instant::now() + Duration::from_secs_f64(duration);
    let mut sent = 0u64;
    'outer: while Instant::now() < deadline {
        for _ in 0..1000 {
            if writer.write_all(&len.to_le_bytes()).is_err() || writer.write_all(&payload).is_err()
            {
                break 'outer;
            }
            sent += 1;
        }
    }
    let _ = writer.flush();
    println!("sent={sent} payload={size}");
}

/// One numbered stream to `addr` until `deadline`, connecting again (every 20 ms) whenever
/// the receiver leaves; each connection's messages are numbered from 0. Returns the
/// messages written.
fn send_numbered(addr: &str, size: usize, len: u32, buffer: usize, deadline: Instant) -> u64 {
    let mut payload = vec![0xA5u8; size];
    let mut total = 0u64;
    while Instant::now() < deadline {
        let Ok(stream) = std::net::TcpStream::connect(addr) else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let mut writer = BufWriter::with_capacity(buffer, stream);
        let mut n = 0u64;
        'connection: while Instant::now() < deadline {
            for _ in 0..1000 {
                put_seq(&mut payload, n);
                if writer.write_all(&len.to_le_bytes()).is_err()
                    || writer.write_all(&payload).is_err()
                {
                    break 'connection;
                }
                n += 1;
            }
        }
        let _ = writer.flush();
        total += n;
    }
    total
}
