//! Multicast scouting between weft, weftd and Eclipse Zenoh, each scenario inside two
//! network namespaces of its own joined by a veth pair (10.77.N.1 and 10.77.N.2, with
//! a multicast route on the veth; `netns`, shared with the multicast transport's tests). Multicast never touches the machine's own
//! interfaces; the namespaces are removed at the end, also on failure.
//!
//! Needs root and iproute2: skipped with a message otherwise, unless
//! `WEFT_REQUIRE_NETNS=1` (set by scripts/test.sh), which turns the skip into a failure.
//! The scenarios with Eclipse Zenoh also need `WEFT_ZENOH_PYTHON` (see weft-testkit).
//! `weftd` is built by the test (with the cargo running it) beside the `weft` binary.

mod netns;

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use netns::{run, NetPair, Proc};
use serde_json::Value;

/// One scenario at a time: the machine is small and the timings matter.
static SERIAL: Mutex<()> = Mutex::new(());

fn weft_bin() -> &'static str {
    env!("CARGO_BIN_EXE_weft")
}

/// weftd, built (once per run) beside the `weft` binary under test, so that it is
/// never stale: cargo builds only this package's binaries for its tests.
fn weftd_bin() -> String {
    static BUILT: OnceLock<String> = OnceLock::new();
    BUILT
        .get_or_init(|| {
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
            path.to_string_lossy().into_owned()
        })
        .clone()
}

/// Starts weftd in namespace `side`; returns it and its ZenohID.
fn weftd(pair: &NetPair, side: usize, args: &[&str]) -> (Proc, String) {
    let mut cmd = pair.cmd(side, &weftd_bin());
    cmd.args(args);
    let p = Proc::spawn(cmd);
    let line = Proc::wait_line(&p.stderr, &["listening on"], 10);
    let zid = line
        .split("(zid ")
        .nth(1)
        .and_then(|s| s.split(')').next())
        .expect("weftd prints its zid")
        .to_string();
    (p, zid)
}

/// `weft scout --json` in namespace `side`: exit code and the nodes found.
fn weft_scout(pair: &NetPair, side: usize, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let mut cmd = pair.cmd(side, weft_bin());
    cmd.args(["scout", "--json"]).args(args);
    let (code, out, err) = run(cmd, 15);
    let nodes = out
        .iter()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    (code, nodes, err)
}

fn locators(node: &Value) -> Vec<String> {
    node["locators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Publishes with `put_cmd` until `sub` has exited (at most `tries` times, a second
/// apart); returns the subscriber's output.
fn put_until_received(mut sub: Proc, put_cmd: impl Fn() -> Command, tries: u32) -> Vec<String> {
    for _ in 0..tries {
        let (code, _, err) = run(put_cmd(), 15);
        assert_eq!(code, Some(0), "put failed: {err}");
        if let Some(status) = sub.wait(1) {
            std::thread::sleep(Duration::from_millis(50));
            let out = sub.drain_stdout();
            if !status.success() || out.is_empty() {
                let err: Vec<String> = sub.stderr.try_iter().collect();
                panic!(
                    "the subscriber exited ({status}) with output {out:?}: {}",
                    err.join("\n")
                );
            }
            return out;
        }
    }
    panic!("the subscriber received nothing after {tries} publications");
}

#[test]
fn a_client_without_endpoint_finds_weftd_by_scouting_and_pub_sub_goes_through_it() {
    let _serial = lock();
    let Some(pair) = NetPair::create("sc", 77, 1) else {
        return;
    };
    let (_router, _) = weftd(&pair, 1, &["-l", "tcp/[::]:7447"]);
    let mut sub = pair.cmd(0, weft_bin());
    sub.args(["sub", "-m", "client", "-k", "demo/scout/**", "--count", "1"])
        .arg("--json");
    let sub = Proc::spawn(sub);
    std::thread::sleep(Duration::from_millis(1500));
    let out = put_until_received(
        sub,
        || {
            let mut put = pair.cmd(0, weft_bin());
            put.args(["put", "-m", "client", "-k", "demo/scout/a", "-p", "found"]);
            put
        },
        5,
    );
    let sample: Value = serde_json::from_str(&out[0]).unwrap();
    assert_eq!(sample["key"], "demo/scout/a");
    assert_eq!(sample["payload"], "found");
}

#[test]
fn weft_scout_lists_weftd_and_a_zenoh_router_with_their_addresses() {
    let _serial = lock();
    let Some(python) = weft_testkit::zenoh_python() else {
        return;
    };
    let Some(pair) = NetPair::create("sc", 77, 2) else {
        return;
    };
    let (_router, weftd_zid) = weftd(&pair, 1, &["-l", "tcp/[::]:7447"]);
    let script = weft_testkit::repo_root().join("tests/interop/zenoh_node.py");
    let mut zenoh = pair.cmd(1, &python);
    zenoh
        .arg(&script)
        .args(["--mode", "router", "--listen", "tcp/0.0.0.0:7448"])
        .args(["--multicast-scouting", "--timeout", "60"]);
    let zenoh = Proc::spawn(zenoh);
    Proc::wait_line(&zenoh.stdout, &["READY"], 20);

    let (code, nodes, err) = weft_scout(&pair, 0, &["--what", "router", "--timeout", "2500"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(nodes.len(), 2, "{nodes:?}");
    let weftd = nodes
        .iter()
        .find(|n| n["zid"] == weftd_zid.as_str())
        .unwrap_or_else(|| panic!("weftd {weftd_zid} not among {nodes:?}"));
    assert_eq!(weftd["whatami"], "router");
    // weftd listens on tcp/[::]:7447: the Hello gives the address facing the scout.
    assert_eq!(locators(weftd), ["tcp/10.77.2.2:7447"]);
    let other = nodes
        .iter()
        .find(|n| n["zid"] != weftd_zid.as_str())
        .unwrap();
    assert_eq!(other["whatami"], "router");
    assert_eq!(locators(other), ["tcp/10.77.2.2:7448"]);

    // Scouting for peers only: neither router answers.
    let (code, nodes, _) = weft_scout(&pair, 0, &["--what", "peer", "--timeout", "1000"]);
    assert_eq!(code, Some(1));
    assert!(nodes.is_empty(), "{nodes:?}");
}

#[test]
fn zenoh_scout_finds_weftd_and_its_locator_works() {
    let _serial = lock();
    let Some(python) = weft_testkit::zenoh_python() else {
        return;
    };
    let Some(pair) = NetPair::create("sc", 77, 3) else {
        return;
    };
    let (_router, weftd_zid) = weftd(&pair, 1, &["-l", "tcp/[::]:7447"]);
    // Garbage on the group first: weftd must ignore it and go on answering.
    let mut junk = pair.cmd(0, &python);
    junk.args([
        "-c",
        "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); \
         [s.sendto(d, ('224.0.0.224', 7446)) for d in (b'', b'\\xff', b'\\x01\\x09', b'\\x02\\x09\\x03')]",
    ]);
    assert_eq!(run(junk, 10).0, Some(0));

    let script = weft_testkit::repo_root().join("tests/interop/zenoh_node.py");
    let mut scout = pair.cmd(0, &python);
    scout
        .arg(&script)
        .args(["--scout", "router", "--timeout", "2.5"]);
    let (code, out, err) = run(scout, 20);
    assert_eq!(code, Some(0), "{err}");
    let hellos: Vec<Value> = out
        .iter()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let hello = hellos
        .iter()
        .find(|h| h["zid"] == weftd_zid.as_str())
        .unwrap_or_else(|| panic!("Zenoh's scout did not find weftd {weftd_zid}: {hellos:?}"));
    assert_eq!(hello["whatami"], "router");
    let locs = locators(hello);
    assert_eq!(locs, ["tcp/10.77.3.2:7447"]);

    // The locator is usable: a Zenoh client connects to it and queries weftd's admin
    // space.
    let mut get = pair.cmd(0, &python);
    get.arg(&script)
        .args(["--mode", "client", "--connect", &locs[0]])
        .args(["--get", &format!("@/{weftd_zid}/router"), "--timeout", "5"]);
    let (code, out, err) = run(get, 30);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.iter().any(|l| l.contains("\"ok\": true")),
        "no admin reply through {}: {out:?}",
        locs[0]
    );
}

#[test]
fn two_weft_peers_in_two_namespaces_discover_each_other_and_exchange_data() {
    let _serial = lock();
    let Some(pair) = NetPair::create("sc", 77, 4) else {
        return;
    };
    // Both directions: which peer has the greater id (and so which transport both keep
    // when both connect) is random.
    for (sub_side, put_side) in [(1, 0), (0, 1)] {
        let mut sub = pair.cmd(sub_side, weft_bin());
        // No endpoints at all: each peer listens on an ephemeral port and scouts.
        sub.args(["sub", "-k", "demo/peers/**"])
            .args(["--count", "1", "--json"]);
        let sub = Proc::spawn(sub);
        std::thread::sleep(Duration::from_millis(1000));
        let payload = format!("from-{put_side}");
        let out = put_until_received(
            sub,
            || {
                let mut put = pair.cmd(put_side, weft_bin());
                put.args(["put", "-k", "demo/peers/x"])
                    .args(["-p", &payload]);
                put
            },
            5,
        );
        let sample: Value = serde_json::from_str(&out[0]).unwrap();
        assert_eq!(sample["payload"], payload.as_str());
    }
}

#[test]
fn weftd_with_no_multicast_scouting_opens_no_socket_and_does_not_answer() {
    let _serial = lock();
    let Some(pair) = NetPair::create("sc", 77, 5) else {
        return;
    };
    let (_silent, _) = weftd(&pair, 1, &["--no-multicast-scouting"]);
    let (code, nodes, err) = weft_scout(&pair, 0, &["--timeout", "1500"]);
    assert_eq!(code, Some(1), "{nodes:?}");
    assert!(nodes.is_empty());
    assert!(err.contains("no node answered"), "{err}");
    let mut ss = pair.cmd(1, "ss");
    ss.args(["-uan"]);
    let (_, sockets, _) = run(ss, 10);
    assert!(
        !sockets.iter().any(|l| l.contains(":7446")),
        "a scouting socket is open: {sockets:?}"
    );

    // Control: a second weftd with scouting in the same namespace is found, alone.
    let (answering, zid) = weftd(&pair, 1, &["-l", "tcp/0.0.0.0:7450"]);
    let (code, nodes, err) = weft_scout(&pair, 0, &["--timeout", "1500"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(nodes.len(), 1, "{nodes:?}");
    assert_eq!(nodes[0]["zid"], zid.as_str());
    assert_eq!(locators(&nodes[0]), ["tcp/10.77.5.2:7450"]);

    // Answering Scouts takes no thread of its own: the links loop waits for the group.
    assert_eq!(
        threads(&answering),
        threads(&_silent),
        "weftd answering Scouts runs more threads than weftd without scouting"
    );
}

/// The threads of a running process.
fn threads(p: &Proc) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", p.id()))
        .expect("the process runs")
        .count()
}
