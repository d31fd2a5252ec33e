//! Test support for weft: running Eclipse Zenoh nodes (Python,
//! `tests/interop/zenoh_node.py`) next to weft, on loopback, and raw clients that send
//! exactly the messages a test chooses ([`raw`]), the zenohd binary ([`zenohd`]), and
//! what a test does when something it needs from outside the repository is missing
//! ([`prerequisite`]), and serial lines made of two linked pseudo-terminals ([`pty`]).

pub mod certs;
pub mod prerequisite;
pub mod pty;
pub mod raw;
pub mod zenohd;

pub use prerequisite::{skipped, Prerequisite};

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

/// A running Zenoh node; killed when dropped.
pub struct ZenohNode {
    child: Child,
    /// Lines the node printed (`READY`, `PUBLISHED`, one JSON object per sample).
    pub lines: Receiver<String>,
}

impl ZenohNode {
    /// Starts `zenoh_node.py` with `args`, waiting for it to print `READY`.
    pub fn start(args: &[&str]) -> Option<Self> {
        let node = Self::launch(args)?;
        assert_eq!(node.line(20), "READY", "the Zenoh node did not start");
        Some(node)
    }

    /// Starts `zenoh_node.py` with `args` without waiting: its first line says whether
    /// its session opened (`READY`) or not (`OPEN_FAILED <reason>`).
    pub fn launch(args: &[&str]) -> Option<Self> {
        let python = zenoh_python()?;
        let script = repo_root().join("tests/interop/zenoh_node.py");
        let mut child = Command::new(python)
            .arg(script)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start a Zenoh node");
        let lines = lines_of(child.stdout.take().unwrap());
        Some(Self { child, lines })
    }

    /// The next line, within `secs` seconds.
    pub fn line(&self, secs: u64) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(secs))
            .expect("a line from the Zenoh node")
    }

    /// The next sample the node printed, as JSON.
    pub fn sample(&self, secs: u64) -> serde_json::Value {
        loop {
            let line = self.line(secs);
            if line.starts_with('{') {
                return serde_json::from_str(&line).unwrap();
            }
        }
    }

    /// The replies a `--get` node prints (one JSON object each), up to the `DONE` line
    /// that ends the query; each line within `secs` seconds.
    pub fn replies(&self, secs: u64) -> Vec<serde_json::Value> {
        let mut replies = Vec::new();
        loop {
            let line = self.line(secs);
            if line == "DONE" {
                return replies;
            }
            replies.push(serde_json::from_str(&line).expect("a JSON reply"));
        }
    }

    /// Waits for the node to exit; returns whether it succeeded.
    pub fn wait(mut self) -> bool {
        self.child.wait().map(|s| s.success()).unwrap_or(false)
    }
}

impl Drop for ZenohNode {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines a child process prints on `output`, as they come: a thread reads them until
/// the output ends or the receiver is dropped.
pub fn lines_of(output: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// The repository's root directory.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// SHA-256 of `data` in hex, computed by the system's `sha256sum`.
pub fn sha256_hex(data: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("sha256sum");
    child.stdin.take().unwrap().write_all(data).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// The Python with eclipse-zenoh (`WEFT_ZENOH_PYTHON`), or `None` when it is not set:
/// the test is skipped, saying so, unless `WEFT_REQUIRE_INTEROP` makes that a failure.
pub fn zenoh_python() -> Option<String> {
    match std::env::var("WEFT_ZENOH_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            Prerequisite::ZenohPython
                .missing("WEFT_ZENOH_PYTHON does not name a Python with eclipse-zenoh==1.10.2");
            None
        }
    }
}

/// The Python with Eclipse Zenoh and the `mcap` package (the test command installs both),
/// or `None` when either is missing: the test is skipped, saying so, unless
/// `WEFT_REQUIRE_INTEROP` makes that a failure.
pub fn zenoh_python_with_mcap() -> Option<String> {
    let python = zenoh_python()?;
    let found = Command::new(&python)
        .args(["-c", "import mcap"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        Prerequisite::ZenohPython.missing(format!(
            "the `mcap` Python package is missing beside Eclipse Zenoh ({python})"
        ));
        return None;
    }
    Some(python)
}

/// A TCP port free on loopback right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (at most 10 s) until something accepts TCP connections on `127.0.0.1:port`;
/// panics naming the port otherwise.
pub fn wait_for_port(port: u16) {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing listens on port {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Spawns `command` with its standard error read until a line containing `ready` (at
/// most 20 s; panics with what it printed otherwise); the rest of its standard error is
/// drained on a thread so that the process never blocks writing it.
pub fn spawn_until_ready(command: &mut std::process::Command, ready: &str) -> std::process::Child {
    use std::io::BufRead;
    let mut child = command
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the command");
    let stderr = child.stderr.take().expect("a piped standard error");
    let (tx, rx) = std::sync::mpsc::channel();
    let ready = ready.to_owned();
    std::thread::spawn(move || {
        let mut seen = String::new();
        let mut lines = std::io::BufReader::new(stderr).lines();
        for line in lines.by_ref().map_while(Result::ok) {
            seen.push_str(&line);
            seen.push('\n');
            if line.contains(&ready) {
                let _ = tx.send(Ok(()));
                lines.for_each(drop);
                return;
            }
        }
        let _ = tx.send(Err(seen));
    });
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(Ok(())) => child,
        Ok(Err(seen)) => panic!("the command ended its standard error before it was ready: {seen}"),
        Err(_) => panic!("the command was not ready within 20 s"),
    }
}

/// Opens a weft client session of the router listening on `tcp/127.0.0.1:port`, without
/// multicast scouting.
pub fn weft_client(port: u16) -> Result<weft::Session, weft::OpenError> {
    let endpoint = format!("tcp/127.0.0.1:{port}")
        .parse()
        .expect("a loopback TCP endpoint");
    weft::open(weft::Config {
        mode: weft::WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![endpoint],
        ..weft::Config::default()
    })
}

/// Opens a weft router session, in this process, listening on a port of
/// `tcp/127.0.0.1` the system chooses (no other test or connection can take it between
/// choosing and listening), without multicast scouting; returns it and its port.
pub fn weft_router() -> (weft::Session, u16) {
    let endpoint = "tcp/127.0.0.1:0".parse().expect("a loopback TCP endpoint");
    let router = weft::open(weft::Config {
        mode: weft::WhatAmI::Router,
        multicast_scouting: false,
        listen: vec![endpoint],
        ..weft::Config::default()
    })
    .expect("a router session");
    let port = router
        .listen_endpoints()
        .iter()
        .find_map(|e| e.rsplit(':').next()?.parse().ok())
        .expect("the router listens on a port");
    (router, port)
}

/// The bytes `zenoh_node.py --size n` publishes.
pub fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// Milliseconds since the Unix epoch: the clock two benchmark programs date their reports
/// with, so that one's counts can be matched to the other's.
pub fn unix_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}
