//! Zenoh-Pico's own example programs on a serial line through weftd, to and from Eclipse
//! Zenoh clients on TCP: `z_pub` → a Zenoh subscriber, a Zenoh publisher → `z_sub`, a
//! Zenoh get → `z_queryable`, `z_get` → a Zenoh queryable, and `z_liveliness`'s token
//! seen (declared, then undeclared) by a Zenoh liveliness subscriber.
//!
//! The line is two pseudo-terminals linked by socat; weftd listens on one end and every
//! program opens the other, one after the other, each a new session on the same line
//! (Zenoh-Pico's POSIX programs end without a Close on serial: weftd must take the next
//! session all the same). The programs are Zenoh-Pico's POSIX build with its serial link
//! (`Z_FEATURE_LINK_SERIAL`), found in the directory `WEFT_ZENOH_PICO_EXAMPLES` names;
//! without it the tests say they are skipped (docs/zenoh-pico-examples.md says which
//! Zenoh-Pico was used).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use weft_testkit::pty::PtyPair;
use weft_testkit::{free_port, lines_of, zenoh_python, Prerequisite};

mod common;
use common::Weftd;

/// The directory of Zenoh-Pico's example programs, or `None` (reported as skipped, or a
/// failure where `WEFT_REQUIRE_ZENOH_PICO` is set).
fn pico_examples() -> Option<PathBuf> {
    let Some(dir) = std::env::var_os("WEFT_ZENOH_PICO_EXAMPLES").filter(|d| !d.is_empty()) else {
        Prerequisite::ZenohPico
            .missing("WEFT_ZENOH_PICO_EXAMPLES does not name Zenoh-Pico's POSIX example programs");
        return None;
    };
    let dir = PathBuf::from(dir);
    if !dir.join("z_pub").is_file() {
        Prerequisite::ZenohPico.missing(format!("no z_pub in {}", dir.display()));
        return None;
    }
    Some(dir)
}

/// What each test needs: the programs, Zenoh's Python package, a serial line.
fn prerequisites() -> Option<(PathBuf, PtyPair)> {
    let dir = pico_examples()?;
    zenoh_python()?;
    let line = PtyPair::new()?;
    Some((dir, line))
}

/// One Zenoh-Pico example program in client mode on the serial line; killed when dropped.
struct PicoProgram {
    child: Child,
    lines: Receiver<String>,
    /// What it printed so far, for a failure's message.
    seen: Vec<String>,
}

impl PicoProgram {
    /// Starts `dir/program` connecting to `endpoint`, with its output line-buffered
    /// (`stdbuf`: its `printf`s would otherwise wait in a full buffer until it exits).
    fn start(dir: &std::path::Path, program: &str, endpoint: &str, args: &[&str]) -> Self {
        let mut child = Command::new("stdbuf")
            .arg("-oL")
            .arg(dir.join(program))
            .args(["-m", "client", "-e", endpoint])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {program}: {e}"));
        let lines = lines_of(child.stdout.take().unwrap());
        Self {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits (`secs` at most) for a line containing `needle` and returns it.
    fn wait_for(&mut self, needle: &str, secs: u64) -> String {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(_) => break,
            }
        }
        panic!(
            "no line with {needle:?} within {secs} s; the program printed: {:#?}",
            self.seen
        );
    }

    /// Waits for the program to end by itself (`secs` at most); whether it succeeded.
    fn ends_well(mut self, secs: u64) -> bool {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            // Polling a child's exit: std has no wait with a timeout.
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for PicoProgram {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// weftd listening on TCP and on the line's end `a`; returns it and the endpoint the
/// programs open (the line's end `b`).
fn weftd_on_the_line(line: &PtyPair) -> (Weftd, String) {
    let weftd = Weftd::start(free_port(), &["-l", &line.endpoint(&line.a, "")]);
    (weftd, line.endpoint(&line.b, ""))
}

#[test]
fn zenoh_pico_on_a_serial_line_publishes_to_and_subscribes_from_zenoh_on_tcp() {
    let Some((dir, line)) = prerequisites() else {
        return;
    };
    let (weftd, serial) = weftd_on_the_line(&line);

    let sub = weftd.zenoh_client(&["--sub", "pico/pub/**", "--count", "3", "--timeout", "60"]);
    let publisher = PicoProgram::start(
        &dir,
        "z_pub",
        &serial,
        &["-k", "pico/pub/a", "-v", "over serial", "-n", "3"],
    );
    for i in 0..3 {
        let s = sub.sample(20);
        assert_eq!(s["key"], "pico/pub/a");
        assert_eq!(s["payload"], format!("[{i:4}] over serial"));
    }
    assert!(publisher.ends_well(20), "z_pub failed");

    // The second session on the line: z_sub, fed by a Zenoh publisher until it prints.
    let mut subscriber = PicoProgram::start(&dir, "z_sub", &serial, &["-k", "pico/sub/**"]);
    subscriber.wait_for("Press CTRL-C", 20);
    let _publisher = weftd.zenoh_client(&[
        "--put",
        "pico/sub/b",
        "--payload",
        "from zenoh",
        "--repeat",
        "300",
        "--interval",
        "0.1",
    ]);
    subscriber.wait_for("Received ('pico/sub/b': 'from zenoh')", 20);
}

#[test]
fn zenoh_pico_on_a_serial_line_answers_and_sends_queries_with_zenoh_on_tcp() {
    let Some((dir, line)) = prerequisites() else {
        return;
    };
    let (weftd, serial) = weftd_on_the_line(&line);

    let mut queryable = PicoProgram::start(
        &dir,
        "z_queryable",
        &serial,
        &["-k", "pico/q/a", "-v", "from pico"],
    );
    queryable.wait_for("Press CTRL-C", 20);
    // The queryable's declaration reaches weftd after the program says it declared it:
    // a get before that finds nobody, so ask until it answers.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let getter = weftd.zenoh_client(&["--get", "pico/q/a", "--timeout", "3"]);
        let replies = getter.replies(10);
        if let Some(r) = replies.first() {
            assert_eq!(r["key"], "pico/q/a");
            assert_eq!(r["payload"], "from pico");
            break;
        }
        assert!(Instant::now() < deadline, "z_queryable never answered");
    }
    queryable.wait_for("Received Query 'pico/q/a'", 10);
    drop(queryable);

    // The next session on the line: z_get, answered by a Zenoh queryable on TCP.
    let _answering = weftd.zenoh_client(&[
        "--queryable",
        "pico/zq/**",
        "--reply",
        "from zenoh",
        "--timeout",
        "60",
    ]);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let mut getter = PicoProgram::start(&dir, "z_get", &serial, &["-k", "pico/zq/x"]);
        let end = getter.wait_for(">> Received", 20);
        if end.contains("'from zenoh'") {
            assert!(end.contains(">> Received PUT"), "{end}");
            getter.wait_for("query final notification", 10);
            break;
        }
        assert!(
            end.contains("query final notification"),
            "z_get printed {end}"
        );
        assert!(Instant::now() < deadline, "z_get never had its answer");
    }
}

#[test]
fn zenoh_pico_liveliness_on_a_serial_line_is_seen_by_zenoh_on_tcp() {
    let Some((dir, line)) = prerequisites() else {
        return;
    };
    let (weftd, serial) = weftd_on_the_line(&line);

    let watcher = weftd.zenoh_client(&[
        "--liveliness-sub",
        "pico/alive/**",
        "--count",
        "2",
        "--timeout",
        "60",
    ]);
    // The token lives 3 s, then the program undeclares it and ends.
    let holder = PicoProgram::start(
        &dir,
        "z_liveliness",
        &serial,
        &["-k", "pico/alive/one", "-t", "3"],
    );
    let alive = watcher.sample(20);
    assert_eq!(
        (alive["kind"].as_str(), alive["key"].as_str()),
        (Some("put"), Some("pico/alive/one"))
    );
    let gone = watcher.sample(20);
    assert_eq!(
        (gone["kind"].as_str(), gone["key"].as_str()),
        (Some("delete"), Some("pico/alive/one"))
    );
    assert!(holder.ends_well(20), "z_liveliness failed");
}
