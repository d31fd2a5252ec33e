//! Raw TCP baseline for latency, standard library only: TCP_NODELAY, blocking sockets, one
//! length-prefixed message in flight.
//!
//! `tcp_pingpong pong -l 127.0.0.1:PORT` echoes every message of one connection;
//! `tcp_pingpong ping SIZE -e 127.0.0.1:PORT [--samples N]` prints one-way latency (half the
//! round trip) as `p50_us=… p99_us=…` like `weft ping`, after 100 warm-up round trips.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use weft_bench_compare::{connect_retrying as connect, print_latency, Args};

const USAGE: &str = "tcp_pingpong pong -l ADDR | tcp_pingpong ping SIZE -e ADDR [--samples N]";

fn main() {
    let args = Args::parse(USAGE);
    match args.positional.first().map(String::as_str) {
        Some("pong") => pong(&args),
        Some("ping") => ping(&args),
        _ => {
            eprintln!("usage: {USAGE}");
            std::process::exit(2);
        }
    }
}

/// Reads one message (length prefix included) into `buf`; false at the end of the stream.
fn read_message(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut header = [0u8; 4];
    if stream.read_exact(&mut header).is_err() {
        return false;
    }
    let len = u32::from_le_bytes(header) as usize;
    buf.clear();
    buf.extend_from_slice(&header);
    buf.resize(4 + len, 0);
    stream.read_exact(&mut buf[4..]).is_ok()
}

fn pong(args: &Args) {
    let addr = args.listen.first().map(|a| a.trim_start_matches("tcp/"));
    let Some(addr) = addr else {
        eprintln!("tcp_pingpong pong: -l ADDR is required");
        std::process::exit(2);
    };
    let listener = TcpListener::bind(addr).unwrap_or_else(|e| {
        eprintln!("tcp_pingpong pong: bind {addr}: {e}");
        std::process::exit(1)
    });
    let Ok((mut stream, _)) = listener.accept() else {
        std::process::exit(1);
    };
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    while read_message(&mut stream, &mut buf) {
        if stream.write_all(&buf).is_err() {
            break;
        }
    }
}

fn ping(args: &Args) {
    let size: usize = args.positional(1, "SIZE", USAGE);
    let samples: usize = args.get("--samples", 1000);
    let addr = args.connect.first().map(|a| a.trim_start_matches("tcp/"));
    let Some(addr) = addr else {
        eprintln!("tcp_pingpong ping: -e ADDR is required");
        std::process::exit(2);
    };
    let Ok(len) = u32::try_from(size) else {
        eprintln!("tcp_pingpong ping: SIZE must fit in 32 bits");
        std::process::exit(2);
    };
    let mut stream = connect(addr);
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut message = len.to_le_bytes().to_vec();
    message.resize(4 + size, 0x5A);
    let mut reply = Vec::new();
    let mut one_way = Vec::with_capacity(samples);
    for i in 0..samples + 100 {
        let start = Instant::now();
        if stream.write_all(&message).is_err() || !read_message(&mut stream, &mut reply) {
            eprintln!("tcp_pingpong ping: the connection was lost");
            std::process::exit(1);
        }
        if i >= 100 {
            one_way.push(start.elapsed().as_secs_f64() * 1e6 / 2.0);
        }
    }
    print_latency(one_way, size);
}
