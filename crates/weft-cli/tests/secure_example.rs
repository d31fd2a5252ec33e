//! The "Securing weftd" walk-through of docs/security.md, run as written: its commands
//! (each must appear in that page verbatim) run through `sh` in a scratch directory
//! holding a copy of `crates/weftd/secure/`, with `weft` and `weftd` on the `PATH`. The
//! only change: the copied files use a free port on 127.0.0.1 instead of 7447. What the
//! subscriber prints and what `weft acl check` answers must be what the page says, and
//! the same clients through Eclipse Zenoh's router started from the same `router.json5`
//! must print the same.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The page that shows the walk-through.
const SECURITY_DOC: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../docs/security.md"
));

const MAKE_CERTS: &str = "crates/weftd/secure/make-certs.sh secure";
const ROUTER: &str = "weftd -c crates/weftd/secure/router.json5";
const SUBSCRIBE: &str = "weft sub -c crates/weftd/secure/operator.json5 -k 'plant/**'";
const MEASURE: &str =
    "weft put -c crates/weftd/secure/sensor-1.json5 -k plant/line-1/temperature -p 21.5";
const SENSOR_CONFIGURES: &str =
    "weft put -c crates/weftd/secure/sensor-1.json5 -k plant/config/setpoint -p 99";
const OPERATOR_CONFIGURES: &str =
    "weft put -c crates/weftd/secure/operator.json5 -k plant/config/setpoint -p 20";
const CHECK: &str = "weft acl check -c crates/weftd/secure/router.json5 --message put \
    --key plant/config/setpoint --flow ingress --cert-common-name sensor-1 \
    --username sensor-1 --link-protocol tls";

/// weftd, built (once per run) beside the `weft` binary under test, so that it is never
/// stale: cargo builds only this package's binaries for its tests.
fn weftd_bin() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let weft = PathBuf::from(env!("CARGO_BIN_EXE_weft"));
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args(["build", "--quiet", "-p", "weftd"])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if weft.parent().and_then(|d| d.file_name()) == Some("release".as_ref()) {
            cargo.arg("--release");
        }
        let out = cargo.output().expect("run cargo");
        assert!(
            out.status.success(),
            "cannot build weftd: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let path = weft.with_file_name("weftd");
        assert!(path.exists(), "{} is missing", path.display());
        path
    })
}

/// A scratch directory laid out as the repository's root for the example; removed when
/// dropped.
struct Scratch {
    dir: PathBuf,
    path: String,
}

impl Scratch {
    /// A copy of `crates/weftd/secure` whose endpoints use `port` on 127.0.0.1.
    fn new(port: u16) -> Self {
        let dir = std::env::temp_dir().join(format!("weft-secure-{}-{port}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let secure = dir.join("crates/weftd/secure");
        std::fs::create_dir_all(&secure).unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../weftd/secure");
        for entry in std::fs::read_dir(&source).unwrap() {
            let entry = entry.unwrap();
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let text = text
                .replace("tls/[::]:7447", &format!("tls/127.0.0.1:{port}"))
                .replace("tls/127.0.0.1:7447", &format!("tls/127.0.0.1:{port}"));
            let to = secure.join(entry.file_name());
            std::fs::write(&to, text).unwrap();
            let mode = entry.metadata().unwrap().permissions();
            std::fs::set_permissions(&to, mode).unwrap();
        }
        let bin = weftd_bin().parent().unwrap().to_str().unwrap().to_owned();
        let path = format!("{bin}:{}", std::env::var("PATH").unwrap_or_default());
        Self { dir, path }
    }

    /// `command`, as docs/security.md writes it, to run in the scratch directory.
    fn command(&self, command: &str) -> Command {
        assert!(
            SECURITY_DOC.contains(command),
            "docs/security.md does not show `{command}`"
        );
        let mut sh = Command::new("sh");
        sh.arg("-c")
            .arg(format!("exec {command}"))
            .current_dir(&self.dir)
            .env("PATH", &self.path);
        sh
    }

    /// Runs `command` to its end; returns whether it succeeded and its standard output.
    fn run(&self, command: &str) -> (bool, String) {
        let out = self
            .command(command)
            .stderr(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }

    /// Starts `command`; its standard output comes line by line on the receiver.
    fn spawn(&self, command: &str) -> (Child, Receiver<String>) {
        let mut child = self
            .command(command)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        (child, rx)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Kills a child process when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Lines from `lines` up to and including the first equal to `wanted`, within 10 s.
fn lines_until(lines: &Receiver<String>, wanted: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while !seen.iter().any(|l| l == wanted) {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => panic!("no `{wanted}` after {seen:?}"),
        }
    }
    seen
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs the example's client commands against the router listening on `port` (what the
/// scratch's files name); returns what the subscriber printed, repeated lines once.
fn clients_through(scratch: &Scratch, port: u16) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the router does not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (subscriber, lines) = scratch.spawn(SUBSCRIBE);
    let _subscriber = Running(subscriber);

    // The sensor's measure reaches the operator (once the subscription is in place).
    let temperature = "put plant/line-1/temperature 21.5";
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut printed = Vec::new();
    while !printed.iter().any(|l| l == temperature) {
        assert!(Instant::now() < deadline, "the measure never arrived");
        assert!(scratch.run(MEASURE).0, "{MEASURE} failed");
        printed.extend(lines.recv_timeout(Duration::from_millis(200)));
    }

    // The sensor may not configure; the operator may. Each `weft put` ends once the router
    // has read its put, so the sensor's is decided before the operator's is sent.
    assert!(
        scratch.run(SENSOR_CONFIGURES).0,
        "{SENSOR_CONFIGURES} failed"
    );
    // A client whose certificate and user belong to different subjects gets in, and
    // matches none; a wrong password does not get in.
    let secure = scratch.dir.join("crates/weftd/secure");
    let sensor = std::fs::read_to_string(secure.join("sensor-1.json5")).unwrap();
    let mixed = sensor
        .replace("user: \"sensor-1\"", "user: \"operator\"")
        .replace("change-me-sensor", "change-me-operator");
    std::fs::write(secure.join("mixed.json5"), mixed).unwrap();
    let wrong = sensor.replace("change-me-sensor", "not-the-password");
    std::fs::write(secure.join("wrong.json5"), wrong).unwrap();
    let put = |config: &str| {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "exec weft put -c crates/weftd/secure/{config} -k plant/config/setpoint -p 77"
            ))
            .current_dir(&scratch.dir)
            .env("PATH", &scratch.path)
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
    };
    assert!(put("mixed.json5"), "a client of no subject is refused");
    assert!(!put("wrong.json5"), "a wrong password is accepted");
    assert!(
        scratch.run(OPERATOR_CONFIGURES).0,
        "{OPERATOR_CONFIGURES} failed"
    );
    printed.extend(lines_until(&lines, "put plant/config/setpoint 20"));
    printed.dedup();
    printed
}

#[test]
fn the_securing_walkthrough_runs_as_written() {
    let port = free_port();
    let scratch = Scratch::new(port);
    let (made, _) = scratch.run(MAKE_CERTS);
    assert!(made, "{MAKE_CERTS} failed (is openssl installed?)");
    let (router, _) = scratch.spawn(ROUTER);
    let router = Running(router);
    let printed = clients_through(&scratch, port);
    let shown = format!("```text\n{}\n```", printed.join("\n"));
    assert!(
        SECURITY_DOC.contains(&shown),
        "the subscriber printed {printed:?}, not what docs/security.md shows"
    );
    // `weft acl check` says what the page says.
    let (_, answer) = scratch.run(CHECK);
    let comment = format!("# {}", answer.trim());
    assert!(
        SECURITY_DOC.contains(&comment),
        "weft acl check answered `{}`, not what docs/security.md shows",
        answer.trim()
    );
    drop(router);

    // Eclipse Zenoh's router, from the same configuration file, does the same.
    let port = free_port();
    let scratch = Scratch::new(port);
    assert!(scratch.run(MAKE_CERTS).0, "{MAKE_CERTS} failed");
    let dir = scratch.dir.to_str().unwrap().to_owned();
    let Some(_zenoh) = weft_testkit::ZenohNode::start(&[
        "--config",
        "crates/weftd/secure/router.json5",
        "--chdir",
        &dir,
        "--timeout",
        "120",
    ]) else {
        return;
    };
    assert_eq!(
        clients_through(&scratch, port),
        printed,
        "through Zenoh's router"
    );
}
