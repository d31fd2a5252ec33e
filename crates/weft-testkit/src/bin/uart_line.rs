//! A serial line with a real line rate, for benchmarks over a UART: two pseudo-terminals
//! whose bytes cross at most `baud / 10` bytes per second each way (8N1: a start bit, 8
//! data bits, a stop bit), as a UART moves them. A pseudo-terminal alone has no rate (its
//! baud setting is ignored), so a benchmark over one measures the processes, not the line.
//!
//! ```text
//! uart_line --baud N --a PATH --b PATH
//! ```
//!
//! Links `PATH`s to the two terminals' devices, prints `READY` once both are open, then
//! every 100 ms a line `bytes a_to_b=N b_to_a=M at_ms=T` (bytes delivered so far each way,
//! and when: milliseconds since the Unix epoch, as `count_sub` dates its counts). A byte
//! is delivered when the line would have carried it: each direction keeps the time its
//! line is free again, and a writer waits (its terminal's buffer fills) while the line is
//! busy, as on a real UART. Nothing is dropped. Ends at SIGTERM or SIGINT (the default
//! action), removing nothing but what it made: the two links, removed at start if stale.

use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::pty::openpty;
use nix::sys::termios::{cfmakeraw, tcgetattr, tcsetattr, SetArg};

/// How long a piece of the line's bytes takes at most: the delivery's granularity.
const PIECE: Duration = Duration::from_micros(250);

fn usage() -> ! {
    eprintln!("usage: uart_line --baud N --a PATH --b PATH");
    std::process::exit(2);
}

/// The command line: the rate and the two links.
struct Args {
    baud: u64,
    a: PathBuf,
    b: PathBuf,
}

fn args() -> Args {
    let mut baud = None;
    let mut a = None;
    let mut b = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--baud" => baud = value.parse::<u64>().ok().filter(|b| *b >= 300),
            "--a" => a = Some(PathBuf::from(value)),
            "--b" => b = Some(PathBuf::from(value)),
            _ => usage(),
        }
    }
    match (baud, a, b) {
        (Some(baud), Some(a), Some(b)) => Args { baud, a, b },
        _ => usage(),
    }
}

/// One end: the terminal's controlling side (which this program reads and writes) and
/// its device side, kept open so that the controlling side never reads an end of file
/// while a client reopens the device.
struct End {
    control: OwnedFd,
    _device: OwnedFd,
}

/// Opens a pseudo-terminal in raw mode and links `link` to its device.
fn open_end(link: &Path) -> End {
    let pty = openpty(None, None).expect("open a pseudo-terminal");
    let mut mode = tcgetattr(pty.slave.as_fd()).expect("read the terminal's mode");
    cfmakeraw(&mut mode);
    tcsetattr(pty.slave.as_fd(), SetArg::TCSANOW, &mode).expect("set the terminal raw");
    let device = nix::unistd::ttyname(pty.slave.as_fd()).expect("the terminal's device name");
    let _ = std::fs::remove_file(link);
    std::os::unix::fs::symlink(&device, link)
        .unwrap_or_else(|e| panic!("link {} to {}: {e}", link.display(), device.display()));
    End {
        control: pty.master,
        _device: pty.slave,
    }
}

/// Carries bytes from `from` to `to` at `bytes_per_s`, counting what it delivered.
fn carry(from: &OwnedFd, to: &OwnedFd, bytes_per_s: u64, delivered: &AtomicU64) {
    let piece = usize::try_from((bytes_per_s * PIECE.as_micros() as u64).div_ceil(1_000_000))
        .unwrap_or(1)
        .max(1);
    let byte_time = Duration::from_nanos(1_000_000_000 / bytes_per_s);
    // One piece read at a time: what waits for the line waits in the writer's terminal
    // (as in a UART driver's buffer), not here.
    let mut buf = vec![0u8; piece];
    let mut line_free = Instant::now();
    loop {
        let n = match nix::unistd::read(std::os::fd::AsRawFd::as_raw_fd(from), &mut buf) {
            Ok(0) => return,
            Ok(n) => n,
            Err(nix::errno::Errno::EINTR) => continue,
            // The device side was closed by every client and by us: cannot happen while
            // we hold it; a real error ends this direction.
            Err(e) => panic!("read the line: {e}"),
        };
        // The line starts carrying these bytes when they arrive or when it is free. A
        // full piece means more bytes were waiting: they arrived while the line was busy,
        // so the line goes on from where it was (the time a sleep overran included, at
        // most two pieces' worth: a sleep overruns by tens of microseconds, and the line
        // would run slower than its rate if it lost them); a short read means the line
        // had nothing to carry until now.
        let now = Instant::now();
        line_free = if n == piece {
            line_free.max(now.checked_sub(PIECE * 2).unwrap_or(now))
        } else {
            line_free.max(now)
        };
        {
            let chunk = &buf[..n];
            line_free += byte_time * chunk.len() as u32;
            if let Some(wait) = line_free.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            let mut rest = chunk;
            while !rest.is_empty() {
                match nix::unistd::write(to.as_fd(), rest) {
                    Ok(w) => rest = &rest[w..],
                    Err(nix::errno::Errno::EINTR) => {}
                    Err(e) => panic!("write the line: {e}"),
                }
            }
            delivered.fetch_add(chunk.len() as u64, Ordering::Relaxed);
        }
    }
}

fn main() {
    let args = args();
    let bytes_per_s = args.baud / 10;
    let a = Arc::new(open_end(&args.a));
    let b = Arc::new(open_end(&args.b));
    let a_to_b = Arc::new(AtomicU64::new(0));
    let b_to_a = Arc::new(AtomicU64::new(0));
    {
        let (a, b, count) = (a.clone(), b.clone(), a_to_b.clone());
        std::thread::spawn(move || carry(&a.control, &b.control, bytes_per_s, &count));
    }
    {
        let (a, b, count) = (a.clone(), b.clone(), b_to_a.clone());
        std::thread::spawn(move || carry(&b.control, &a.control, bytes_per_s, &count));
    }
    let mut out = std::io::stdout();
    let _ = writeln!(out, "READY");
    let _ = out.flush();
    loop {
        // The counters' report period (this loop does nothing else).
        std::thread::sleep(Duration::from_millis(100));
        let line = format!(
            "bytes a_to_b={} b_to_a={} at_ms={}",
            a_to_b.load(Ordering::Relaxed),
            b_to_a.load(Ordering::Relaxed),
            weft_testkit::unix_ms()
        );
        if writeln!(out, "{line}").and_then(|()| out.flush()).is_err() {
            return;
        }
    }
}
