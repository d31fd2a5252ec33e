//! Three routers in a line, a1 – b2 – c3, Zenoh clients of c3 declaring a subscriber, a
//! queryable and a token: every router's admin space lists them under c3, the router they
//! come from, not under the neighbour that forwarded them (routers name the origin of a
//! declaration they forward with the NodeId extension, its index in the link-state lists
//! they sent on that link). Mixes of weftd and Zenoh 1.10.2 routers: the zenohd binary
//! when `WEFT_ZENOHD` names it, else (unless `WEFT_REQUIRE_ZENOHD` is set) a zenoh-python
//! session in router mode with its admin space on (the same router code): weftd reads
//! Zenoh's node ids and Zenoh reads weftd's. Data from c3's side reaches a1's subscriber
//! exactly once; undeclarations and a router's death empty the lists again.

use std::time::{Duration, Instant};

use serde_json::Value;
use weft_testkit::zenohd::{self, Zenohd};
use weft_testkit::{free_port, zenoh_python, ZenohNode};

mod common;
use common::{zenoh_client_at as client, Weftd};

/// The routers' ids, from one end of the line to the other.
const IDS: [&str; 3] = ["a1", "b2", "c3"];

/// Which implementation runs a router.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Weft,
    Zenohd,
}

/// A router of the line: a weftd, a zenohd process or a zenoh-python router, each
/// stopped when dropped.
struct Router {
    _weftd: Option<Weftd>,
    _zenohd: Option<Zenohd>,
    _zenoh_python: Option<ZenohNode>,
}

/// Starts a router of `kind` with id `id` listening on `port`, connected to `connect`.
fn router(kind: Kind, id: &str, port: u16, connect: Option<u16>) -> Router {
    let connect = connect.map(|p| format!("tcp/127.0.0.1:{p}"));
    let mut args = vec!["-i", id];
    if let Some(c) = &connect {
        args.extend(["-e", c.as_str()]);
    }
    match kind {
        Kind::Weft => Router {
            _weftd: Some(Weftd::start(port, &args)),
            _zenohd: None,
            _zenoh_python: None,
        },
        Kind::Zenohd if zenohd::binary().is_none() => {
            eprintln!(
                "WEFT_ZENOHD is not set: a zenoh-python router stands in for zenohd {}",
                zenohd::VERSION
            );
            let listen = format!("tcp/127.0.0.1:{port}");
            let id = format!("id=\"{id}\"");
            let mut node_args = vec![
                "--mode",
                "router",
                "--listen",
                &listen,
                "--insert",
                &id,
                "--insert",
                "adminspace/enabled=true",
                "--timeout",
                "120",
            ];
            if let Some(c) = &connect {
                node_args.extend(["--connect", c.as_str()]);
            }
            Router {
                _weftd: None,
                _zenohd: None,
                _zenoh_python: Some(ZenohNode::start(&node_args).expect("checked by the caller")),
            }
        }
        Kind::Zenohd => Router {
            _weftd: None,
            _zenohd: Some(Zenohd::start(port, &args).expect("zenohd, found above")),
            _zenoh_python: None,
        },
    }
}

/// Who a router's admin space says declared each entity under `origin/**`:
/// `kind/key` -> (routers, number of clients).
fn sources(port: u16, id: &str) -> Vec<(String, Vec<String>, usize)> {
    let selector = format!("@/{id}/router/*/origin/**");
    let getter = client(port, &["--get", &selector, "--timeout", "5"]);
    let prefix = format!("@/{id}/router/");
    let mut found: Vec<(String, Vec<String>, usize)> = getter
        .replies(10)
        .iter()
        .filter_map(|r| {
            let key = r["key"].as_str()?.strip_prefix(&prefix)?.to_string();
            let v: Value = serde_json::from_str(r["payload"].as_str()?).ok()?;
            let routers = v["routers"]
                .as_array()?
                .iter()
                .filter_map(|z| z.as_str().map(str::to_owned))
                .collect();
            Some((key, routers, v["clients"].as_array()?.len()))
        })
        .collect();
    found.sort();
    found
}

/// Waits (at most 30 s) until the admin space of every router lists what `want` says for
/// router `i`, polling it with Zenoh clients' gets.
fn wait_for_sources(ports: &[u16; 3], want: impl Fn(usize) -> Vec<(String, Vec<String>, usize)>) {
    let deadline = Instant::now() + Duration::from_secs(30);
    for (i, (port, id)) in ports.iter().zip(IDS).enumerate() {
        let expected = want(i);
        loop {
            let got = sources(*port, id);
            if got == expected {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{id}'s admin space lists {got:?}, not {expected:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The entities of c3's clients as router `i` of the line lists them: all under c3, the
/// clients themselves at c3 only.
fn declared_at_c3(i: usize, kinds: &[&str]) -> Vec<(String, Vec<String>, usize)> {
    let all = [
        ("queryable", "origin/q"),
        ("subscriber", "origin/sub"),
        ("token", "origin/tok"),
    ];
    all.iter()
        .filter(|(k, _)| kinds.contains(k))
        .map(|(k, key)| {
            (
                format!("{k}/{key}"),
                vec!["c3".to_string()],
                usize::from(i == 2),
            )
        })
        .collect()
}

/// A subscriber at `sub_port` receives each of a burst of puts from `pub_port` exactly
/// once (after probes show the route is there).
fn check_once(sub_port: u16, pub_port: u16) {
    let sub = client(
        sub_port,
        &["--sub", "data/**", "--count", "1000", "--timeout", "60"],
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    'probing: loop {
        let probe = client(pub_port, &["--put", "data/probe", "--payload", "p"]);
        assert!(probe.wait());
        if sub.lines.recv_timeout(Duration::from_millis(200)).is_ok() {
            break 'probing;
        }
        assert!(Instant::now() < deadline, "no probe reached the subscriber");
    }
    // Probes still on their way are let through before the burst is counted.
    while sub.lines.recv_timeout(Duration::from_millis(500)).is_ok() {}
    let publisher = client(
        pub_port,
        &[
            "--put",
            "data/burst",
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
    assert_eq!(n, 20, "each of 20 samples arrives exactly once");
}

/// The line a1 – b2 – c3 of routers of `kinds`: the admin spaces list c3's clients'
/// entities under c3; data from c3 reaches a1 once; an undeclaration, then c3's death,
/// take them out of every list.
fn line(kinds: [Kind; 3]) {
    let ports = [free_port(), free_port(), free_port()];
    let a = router(kinds[0], IDS[0], ports[0], None);
    let b = router(kinds[1], IDS[1], ports[1], Some(ports[0]));
    let c = router(kinds[2], IDS[2], ports[2], Some(ports[1]));
    let sub = client(
        ports[2],
        &["--sub", "origin/sub", "--count", "1000", "--timeout", "90"],
    );
    let _q = client(
        ports[2],
        &["--queryable", "origin/q", "--reply", "q", "--timeout", "90"],
    );
    let _tok = client(ports[2], &["--token", "origin/tok", "--timeout", "90"]);
    let all = ["queryable", "subscriber", "token"];
    wait_for_sources(&ports, |i| declared_at_c3(i, &all));
    check_once(ports[0], ports[2]);
    drop(sub);
    wait_for_sources(&ports, |i| declared_at_c3(i, &["queryable", "token"]));
    drop(c);
    let ends = [ports[0], ports[1]];
    let deadline = Instant::now() + Duration::from_secs(30);
    for (port, id) in ends.iter().zip(IDS) {
        loop {
            let got = sources(*port, id);
            if got.is_empty() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "{id} still lists {got:?} once c3 is gone"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    drop((a, b));
}

/// Whether the test can run: zenoh-python is at hand (it plays the Zenoh routers when
/// no zenohd binary is given).
fn runnable() -> bool {
    zenoh_python().is_some()
}

#[test]
fn three_weftd_in_a_line_list_declarations_under_their_origin() {
    let kinds = [Kind::Weft, Kind::Weft, Kind::Weft];
    if runnable() {
        line(kinds);
    }
}

#[test]
fn weftd_reads_the_node_ids_of_zenohd_in_the_middle() {
    let kinds = [Kind::Weft, Kind::Zenohd, Kind::Weft];
    if runnable() {
        line(kinds);
    }
}

#[test]
fn zenohd_at_the_end_reads_the_node_ids_of_weftd() {
    let kinds = [Kind::Zenohd, Kind::Weft, Kind::Weft];
    if runnable() {
        line(kinds);
    }
}

#[test]
fn weftd_forwards_for_zenohd_at_the_far_end() {
    let kinds = [Kind::Weft, Kind::Weft, Kind::Zenohd];
    if runnable() {
        line(kinds);
    }
}

/// What zenohd itself does in the same line: the reference the others follow.
#[test]
fn three_zenohd_in_a_line_list_declarations_under_their_origin() {
    let kinds = [Kind::Zenohd, Kind::Zenohd, Kind::Zenohd];
    if runnable() {
        line(kinds);
    }
}
