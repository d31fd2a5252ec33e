//! Helpers shared by the weftd integration tests: a weftd process on loopback, and clients
//! of it.

// Each test file uses its own part of these helpers.
#![allow(dead_code)]

use std::process::{Child, Command, Stdio};

use weft::{Config, WhatAmI};
use weft_testkit::ZenohNode;

/// A weftd process listening on `tcp/127.0.0.1:PORT`, without multicast scouting; killed
/// (`kill -9`) when dropped.
pub(crate) struct Weftd {
    child: Child,
    /// The port it listens on.
    pub(crate) port: u16,
    /// `tcp/127.0.0.1:PORT`.
    pub(crate) endpoint: String,
}

impl Weftd {
    /// Starts weftd with the extra arguments `args`; returns once its port accepts.
    pub(crate) fn start(port: u16, args: &[&str]) -> Self {
        Self::launch(Command::new(env!("CARGO_BIN_EXE_weftd")), port, args)
    }

    /// Starts weftd with the environment variables `env` added to this process's, and the
    /// extra arguments `args`; returns once its port accepts.
    pub(crate) fn with_env(port: u16, env: &[(&str, &str)], args: &[&str]) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_weftd"));
        command.envs(env.iter().copied());
        Self::launch(command, port, args)
    }

    /// Starts weftd under a limit of `open_files` file descriptors (`ulimit -n`: set in a
    /// shell around it, so that the test process keeps its own), with the configuration
    /// text `config` (JSON5).
    pub(crate) fn with_fd_limit(port: u16, open_files: u32, config: &str) -> Self {
        let path = write_config(port, config);
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg(format!("ulimit -n {open_files} && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_weftd"));
        Self::launch(shell, port, &["-c", path.to_str().unwrap()])
    }

    /// Starts weftd with the configuration text `config` (JSON5) and the extra arguments.
    pub(crate) fn with_config(port: u16, config: &str, args: &[&str]) -> Self {
        let path = write_config(port, config);
        let mut all = vec!["-c", path.to_str().unwrap()];
        all.extend_from_slice(args);
        Self::start(port, &all)
    }

    /// Starts weftd with the configuration text `config` (JSON5) and the extra arguments,
    /// its log (stderr) written to the file `log`.
    pub(crate) fn logging_to(
        port: u16,
        config: &str,
        args: &[&str],
        log: &std::path::Path,
    ) -> Self {
        let path = write_config(port, config);
        let mut all = vec!["-c", path.to_str().unwrap()];
        all.extend_from_slice(args);
        let file = std::fs::File::create(log).expect("create the log file");
        let command = Command::new(env!("CARGO_BIN_EXE_weftd"));
        Self::launch_with(command, port, &all, Stdio::from(file))
    }

    /// Runs `command` (weftd, or what runs it) listening on `port` with `args`; returns
    /// once the port accepts.
    fn launch(command: Command, port: u16, args: &[&str]) -> Self {
        Self::launch_with(command, port, args, Stdio::null())
    }

    /// [`Self::launch`], with weftd's stderr going to `stderr`.
    fn launch_with(mut command: Command, port: u16, args: &[&str], stderr: Stdio) -> Self {
        let endpoint = format!("tcp/127.0.0.1:{port}");
        let child = command
            .args(["-l", &endpoint, "--no-multicast-scouting"])
            .args(args)
            .stderr(stderr)
            .spawn()
            .expect("start weftd");
        let weftd = Self {
            child,
            port,
            endpoint,
        };
        wait_for_port(port);
        weftd
    }

    /// Starts weftd connecting to the routers listening on `neighbours`.
    pub(crate) fn connected(port: u16, neighbours: &[u16]) -> Self {
        let endpoints: Vec<String> = neighbours
            .iter()
            .map(|p| format!("tcp/127.0.0.1:{p}"))
            .collect();
        let args: Vec<&str> = endpoints.iter().flat_map(|e| ["-e", e.as_str()]).collect();
        Self::start(port, &args)
    }

    /// An Eclipse Zenoh client of this router (`zenoh_node.py` with `extra` arguments).
    pub(crate) fn zenoh_client(&self, extra: &[&str]) -> ZenohNode {
        zenoh_client_at(self.port, extra)
    }

    /// A weft client session of this router.
    pub(crate) fn weft_client(&self) -> weft::Session {
        weft_client_at(self.port)
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM (weftd shuts down in order), and waits at most 20 s for the process to end;
    /// returns its exit status.
    pub(crate) fn terminate(mut self) -> std::process::ExitStatus {
        use nix::sys::signal::{kill, Signal};
        use nix::unistd::Pid;
        let pid = Pid::from_raw(i32::try_from(self.child.id()).unwrap());
        kill(pid, Signal::SIGTERM).unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "weftd did not end within 20 s of SIGTERM"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// `kill -9`, and wait for the process to end.
    pub(crate) fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Weftd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Writes the configuration text `config` where a weftd on `port` of this test process
/// reads it.
fn write_config(port: u16, config: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("weftd-test-{port}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.json5");
    std::fs::write(&path, config).unwrap();
    path
}

/// Runs weftd with `args` on a free port; returns its exit code and what it printed on
/// stderr. It must exit on its own (it is refused before listening).
pub(crate) fn run_weftd(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(args)
        .args(["--no-multicast-scouting", "-l"])
        .arg(format!("tcp/127.0.0.1:{}", weft_testkit::free_port()))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A weft client session of the router (weftd or Zenoh's) listening on
/// `tcp/127.0.0.1:port`.
pub(crate) fn weft_client_at(port: u16) -> weft::Session {
    weft::open(Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![format!("tcp/127.0.0.1:{port}").parse().unwrap()],
        ..Config::default()
    })
    .unwrap()
}

/// An Eclipse Zenoh client of the router (weftd or Zenoh's) listening on
/// `tcp/127.0.0.1:port`, running `zenoh_node.py` with `extra` arguments.
pub(crate) fn zenoh_client_at(port: u16, extra: &[&str]) -> ZenohNode {
    zenoh_node_at("client", port, extra)
}

/// An Eclipse Zenoh node in `mode` (client or peer) connected to the router listening on
/// `tcp/127.0.0.1:port`, running `zenoh_node.py` with `extra` arguments.
pub(crate) fn zenoh_node_at(mode: &str, port: u16, extra: &[&str]) -> ZenohNode {
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let mut args = vec!["--mode", mode, "--connect", endpoint.as_str()];
    args.extend_from_slice(extra);
    ZenohNode::start(&args).expect("a Zenoh node")
}

/// Zenoh's own router (the Python one) listening on `endpoint` for at most 90 s.
pub(crate) fn zenoh_router_at(endpoint: &str) -> ZenohNode {
    ZenohNode::start(&["--mode", "router", "--listen", endpoint, "--timeout", "90"])
        .expect("a Zenoh router")
}

/// The payloads of the replies (at most 10 s) a Zenoh getter received, sorted.
pub(crate) fn sorted_reply_payloads(getter: &ZenohNode) -> Vec<String> {
    let mut payloads: Vec<String> = getter
        .replies(10)
        .iter()
        .map(|r| r["payload"].as_str().unwrap().to_string())
        .collect();
    payloads.sort();
    payloads
}

/// Waits (at most 10 s) until something accepts TCP connections on `127.0.0.1:port`.
pub(crate) use weft_testkit::wait_for_port;

/// The number of sockets process `pid` holds (0 once it is gone).
pub(crate) fn sockets(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|dir| {
            dir.filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
                .filter(|target| target.to_string_lossy().starts_with("socket:"))
                .count()
        })
        .unwrap_or(0)
}

/// The number of threads of process `pid`.
pub(crate) fn threads(pid: u32) -> usize {
    proc_status(pid, "Threads:")
}

/// The resident memory of process `pid`, in bytes.
pub(crate) fn rss(pid: u32) -> usize {
    proc_status(pid, "VmRSS:") * 1024
}

/// The highest resident memory of process `pid` so far (`VmHWM`), in bytes.
pub(crate) fn peak_rss(pid: u32) -> usize {
    proc_status(pid, "VmHWM:") * 1024
}

/// Resets the highest resident memory of process `pid` to what it holds now (`echo 5 >
/// /proc/<pid>/clear_refs`); false where the kernel does not allow it.
pub(crate) fn reset_peak_rss(pid: u32) -> bool {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok()
}

/// The number on the line of `/proc/<pid>/status` that starts with `field`.
fn proc_status(pid: u32, field: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Raises this process's limit of open files (inherited by the weftd it starts) to `n`.
pub(crate) fn raise_open_files_limit(n: u64) {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    if soft < n {
        assert!(
            hard >= n,
            "this test needs {n} open files; the hard limit is {hard}"
        );
        setrlimit(Resource::RLIMIT_NOFILE, n, hard).unwrap();
    }
}
