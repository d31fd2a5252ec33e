//! Routers linked to routers: a line of three weftd, and weftd next to a Zenoh router, with
//! Zenoh clients at both ends.

use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use weft_testkit::{free_port, zenoh_python, ZenohNode};

struct Weftd(Child);

impl Drop for Weftd {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn weftd(port: u16, connect: &[String]) -> Weftd {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_weftd"));
    cmd.args([
        "-l",
        &format!("tcp/127.0.0.1:{port}"),
        "--no-multicast-scouting",
    ]);
    for c in connect {
        cmd.args(["-e", c]);
    }
    let child = cmd.stderr(Stdio::null()).spawn().expect("start weftd");
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "weftd did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    Weftd(child)
}

fn client(port: u16, extra: &[&str]) -> ZenohNode {
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let mut args = vec!["--mode", "client", "--connect", endpoint.as_str()];
    args.extend_from_slice(extra);
    ZenohNode::start(&args).expect("a Zenoh client")
}

/// Publishes from one end until the other end's subscriber sees it; then checks that
/// each of a burst of puts arrives exactly once.
fn check_ends(sub_port: u16, pub_port: u16) {
    let sub = client(
        sub_port,
        &["--sub", "far/**", "--count", "1000", "--timeout", "60"],
    );
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let probe = client(pub_port, &["--put", "far/probe", "--payload", "probe"]);
        assert!(probe.wait());
        if sub.lines.recv_timeout(Duration::from_millis(300)).is_ok() {
            break;
        }
        assert!(Instant::now() < deadline, "nothing crossed the routers");
    }
    std::thread::sleep(Duration::from_millis(300));
    while sub.lines.try_recv().is_ok() {}
    let publisher = client(
        pub_port,
        &[
            "--put",
            "far/burst",
            "--payload",
            "x",
            "--repeat",
            "20",
            "--interval",
            "0.01",
        ],
    );
    assert!(publisher.wait());
    let mut n = 0;
    while let Ok(line) = sub.lines.recv_timeout(Duration::from_millis(1500)) {
        if line.starts_with('{') {
            n += 1;
        }
    }
    assert_eq!(n, 20, "every sample exactly once");
}

#[test]
fn a_line_of_three_routers() {
    if zenoh_python().is_none() {
        return;
    }
    let (a, b, c) = (free_port(), free_port(), free_port());
    let _ra = weftd(a, &[]);
    let _rb = weftd(b, &[format!("tcp/127.0.0.1:{a}")]);
    let _rc = weftd(c, &[format!("tcp/127.0.0.1:{b}")]);
    check_ends(a, c);
    check_ends(c, a);
}

#[test]
fn weftd_next_to_a_zenoh_router() {
    if zenoh_python().is_none() {
        return;
    }
    let (w, z) = (free_port(), free_port());
    let z_endpoint = format!("tcp/127.0.0.1:{z}");
    let _zenohd = ZenohNode::start(&[
        "--mode",
        "router",
        "--listen",
        &z_endpoint,
        "--timeout",
        "90",
    ])
    .unwrap();
    let _weftd = weftd(w, std::slice::from_ref(&z_endpoint));
    check_ends(w, z);
    check_ends(z, w);
    // Queries both ways.
    for (queryable_at, getter_at, reply) in
        [(z, w, "from zenoh's side"), (w, z, "from weft's side")]
    {
        let _q = client(
            queryable_at,
            &["--queryable", "far/q", "--reply", reply, "--timeout", "30"],
        );
        std::thread::sleep(Duration::from_millis(700));
        let getter = client(getter_at, &["--get", "far/q", "--timeout", "5"]);
        let r: serde_json::Value = serde_json::from_str(&getter.line(10)).unwrap();
        assert_eq!(r["payload"], reply);
        assert_eq!(getter.line(10), "DONE");
    }
}
