//! Two network namespaces joined by a veth pair (10.S.N.1 and 10.S.N.2, with a multicast
//! route on the veth), created for one scenario and removed when dropped, and background
//! processes run inside them. Shared by the scouting and multicast tests.
//!
//! Needs root and iproute2: [`NetPair::create`] reports the test skipped otherwise,
//! unless `WEFT_REQUIRE_NETNS=1`, which turns the skip into a failure.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use weft_testkit::Prerequisite;

/// Two namespaces joined by a veth pair; removed when dropped.
pub(crate) struct NetPair {
    ns: [String; 2],
    /// The veth's name in each namespace.
    pub(crate) dev: [String; 2],
    /// The address of each side.
    pub(crate) addr: [String; 2],
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl NetPair {
    /// Creates the pair for scenario `tag` of the test file `file` (two letters, in the
    /// names of the namespaces and veths) on the subnet `10.<subnet>.<tag>.0/24`, or
    /// returns `None` after reporting why it cannot (skipped, or a failure under
    /// `WEFT_REQUIRE_NETNS=1`).
    pub(crate) fn create(file: &str, subnet: u8, tag: u8) -> Option<Self> {
        let pid = std::process::id() % 1_000_000;
        let pair = Self {
            ns: [
                format!("weft{file}{tag}a{pid}"),
                format!("weft{file}{tag}b{pid}"),
            ],
            dev: [
                format!("w{file}v{tag}a{pid}"),
                format!("w{file}v{tag}b{pid}"),
            ],
            addr: [
                format!("10.{subnet}.{tag}.1"),
                format!("10.{subnet}.{tag}.2"),
            ],
        };
        match pair.setup() {
            Ok(()) => Some(pair),
            Err(reason) => {
                drop(pair);
                Prerequisite::Netns.missing(format!(
                    "network namespaces unavailable (needs root and iproute2): {reason}"
                ));
                None
            }
        }
    }

    fn setup(&self) -> Result<(), String> {
        let uid = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if uid != "0" {
            return Err(format!("running as uid {uid}, not root"));
        }
        for ns in &self.ns {
            ip(&["netns", "add", ns])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
            // IPv6 link-local addresses usable at once (no duplicate detection), for the
            // IPv6 groups.
            ip(&[
                "netns",
                "exec",
                ns,
                "sysctl",
                "-q",
                "-w",
                "net.ipv6.conf.default.accept_dad=0",
            ])?;
        }
        ip(&[
            "link",
            "add",
            &self.dev[0],
            "netns",
            &self.ns[0],
            "type",
            "veth",
            "peer",
            "name",
            &self.dev[1],
            "netns",
            &self.ns[1],
        ])?;
        for ((ns, addr), dev) in self.ns.iter().zip(&self.addr).zip(&self.dev) {
            let cidr = format!("{addr}/24");
            ip(&["-n", ns, "addr", "add", &cidr, "dev", dev])?;
            ip(&["-n", ns, "link", "set", dev, "up"])?;
            ip(&["-n", ns, "route", "add", "224.0.0.0/4", "dev", dev])?;
        }
        Ok(())
    }

    /// A command run inside namespace `side` (0 or 1).
    pub(crate) fn cmd(&self, side: usize, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.ns[side], program]);
        c
    }
}

impl Drop for NetPair {
    fn drop(&mut self) {
        // Deleting a namespace deletes its end of the veth, and so the pair.
        for ns in &self.ns {
            let _ = Command::new("ip")
                .args(["netns", "del", ns])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// A background process, killed when dropped; its output lines are collected.
pub(crate) struct Proc {
    child: Child,
    /// Standard output, line by line.
    pub(crate) stdout: mpsc::Receiver<String>,
    /// Standard error, line by line.
    pub(crate) stderr: mpsc::Receiver<String>,
}

fn lines_of<R: Read + Send + 'static>(r: R) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(r).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

impl Proc {
    /// Starts `cmd`.
    pub(crate) fn spawn(mut cmd: Command) -> Self {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start a process");
        let stdout = lines_of(child.stdout.take().unwrap());
        let stderr = lines_of(child.stderr.take().unwrap());
        Self {
            child,
            stdout,
            stderr,
        }
    }

    /// The first line of `rx` containing every one of `needles`, within `secs`.
    pub(crate) fn wait_line(rx: &mpsc::Receiver<String>, needles: &[&str], secs: u64) -> String {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if needles.iter().all(|n| line.contains(n)) => return line,
                Ok(_) => {}
                Err(_) => panic!("no line with {needles:?} within {secs} s"),
            }
        }
    }

    /// Its process id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    /// Everything printed on standard output so far.
    pub(crate) fn drain_stdout(&self) -> Vec<String> {
        self.stdout.try_iter().collect()
    }

    /// Kills it at once (no Close is sent).
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the exit within `secs` (killing the process past it).
    pub(crate) fn wait(&mut self, secs: u64) -> Option<ExitStatus> {
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        None
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Runs a command to completion within `secs` (killed past it): exit code, standard
/// output lines and standard error.
pub(crate) fn run(cmd: Command, secs: u64) -> (Option<i32>, Vec<String>, String) {
    let mut p = Proc::spawn(cmd);
    let status = p.wait(secs);
    // The process is gone: its readers end at the end of its pipes.
    let out: Vec<String> = p.stdout.iter().collect();
    let err: Vec<String> = p.stderr.iter().collect();
    (status.and_then(|s| s.code()), out, err.join("\n"))
}

/// The value of `field=` in a log line (`zid=...`, `member=...`).
pub(crate) fn field<'l>(line: &'l str, name: &str) -> &'l str {
    let start = line
        .find(&format!("{name}="))
        .unwrap_or_else(|| panic!("no {name}= in {line}"))
        + name.len()
        + 1;
    line[start..].split_whitespace().next().unwrap_or("")
}
