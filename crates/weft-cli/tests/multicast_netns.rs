//! UDP multicast groups (`udp/224.0.0.224:PORT#iface=...` endpoints) between weft
//! processes and with Eclipse Zenoh, each scenario inside two network namespaces of its
//! own (see `netns`): multicast never touches the machine's own interfaces.
//!
//! Needs root and iproute2 (skipped otherwise, a failure under `WEFT_REQUIRE_NETNS=1`);
//! the scenario with Eclipse Zenoh also needs `WEFT_ZENOH_PYTHON` (see weft-testkit).

mod netns;

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use netns::{field, run, NetPair, Proc};

/// One scenario at a time: the machine is small and the leases are short.
static SERIAL: Mutex<()> = Mutex::new(());

const GROUP: &str = "udp/224.0.0.224:17447";

/// Joins every 300 ms, so that members meet quickly.
const FAST_JOINS: &str = "transport/multicast/join_interval:300";

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn weft(pair: &NetPair, side: usize, args: &[&str]) -> Command {
    let mut c = pair.cmd(side, env!("CARGO_BIN_EXE_weft"));
    c.env("RUST_LOG", "weft=info").args(args).args([
        "--no-multicast-scouting",
        "--cfg",
        FAST_JOINS,
    ]);
    c
}

fn group(pair: &NetPair, side: usize) -> String {
    format!("{GROUP}#iface={}", pair.dev[side])
}

/// A `weft sub` on `demo/mc/**` in namespace `side`, member of the group once returned;
/// returns it and its ZenohID.
fn sub(pair: &NetPair, side: usize, extra: &[&str]) -> (Proc, String) {
    sub_on(pair, side, &group(pair, side), extra)
}

/// As [`sub`], on the group endpoint `ep`.
fn sub_on(pair: &NetPair, side: usize, ep: &str, extra: &[&str]) -> (Proc, String) {
    let mut args = vec!["sub", "-l", ep, "-k", "demo/mc/**", "--json"];
    args.extend_from_slice(extra);
    let p = Proc::spawn(weft(pair, side, &args));
    let line = Proc::wait_line(&p.stderr, &["member of multicast group"], 10);
    let zid = field(&line, "zid").to_string();
    Proc::wait_line(&p.stderr, &["subscribed to"], 10);
    (p, zid)
}

/// Waits until `p` logged that `member` joined the group (or left it, `what`).
fn member_event(p: &Proc, what: &str, member: &str, secs: u64) {
    Proc::wait_line(&p.stderr, &[what, &format!("member={member}")], secs);
}

/// Whether a line of `p`'s output containing `needle` comes within `wait`.
fn received(p: &Proc, needle: &str, wait: Duration) -> bool {
    let end = Instant::now() + wait;
    while let Ok(line) = p
        .stdout
        .recv_timeout(end.saturating_duration_since(Instant::now()))
    {
        if line.contains(needle) {
            return true;
        }
    }
    false
}

/// Publishes `payload` on `key` from a new `weft put` in namespace `side` (a member for
/// the time of its put) until every one of `subs` printed it (5 tries, one a second).
fn put_until_received(pair: &NetPair, side: usize, key: &str, payload: &str, subs: &[&Proc]) {
    let ep = group(pair, side);
    let mut waiting: Vec<&Proc> = subs.to_vec();
    for _ in 0..5 {
        let (code, _, err) = run(
            weft(pair, side, &["put", "-l", &ep, "-k", key, "-p", payload]),
            15,
        );
        assert_eq!(code, Some(0), "put failed: {err}");
        waiting.retain(|s| !received(s, payload, Duration::from_secs(1)));
        if waiting.is_empty() {
            return;
        }
    }
    panic!(
        "{} subscriber(s) did not receive {payload:?}",
        waiting.len()
    );
}

#[test]
fn three_weft_members_exchange_data_and_a_silent_member_leaves_by_lease_then_joins_again() {
    let _serial = lock();
    let Some(pair) = NetPair::create("mc", 79, 1) else {
        return;
    };
    let (a, a_zid) = sub(&pair, 0, &[]);
    let (b, b_zid) = sub(&pair, 1, &[]);
    member_event(&a, "member joined", &b_zid, 10);
    member_event(&b, "member joined", &a_zid, 10);

    // A third member (a put, from b's namespace) reaches both, across the veth and on
    // its own machine; then the other way.
    put_until_received(&pair, 1, "demo/mc/from-b-side", "one", &[&a, &b]);
    put_until_received(&pair, 0, "demo/mc/from-a-side", "two", &[&b, &a]);

    // A member with a 1 s lease, killed without a word: the others drop it once its
    // lease has passed.
    let c_args = [
        "--cfg",
        "transport/link/tx/lease:1000",
        "--cfg",
        "id:\"c0ffee01\"",
    ];
    let (mut c, c_zid) = sub(&pair, 1, &c_args);
    assert_eq!(c_zid, "c0ffee01");
    member_event(&a, "member joined", &c_zid, 10);
    member_event(&b, "member joined", &c_zid, 10);
    c.kill();
    member_event(&a, "member left (Expired)", &c_zid, 10);
    member_event(&b, "member left (Expired)", &c_zid, 10);

    // It comes back with the same ZenohID (from another port): it joins again and
    // receives.
    let (c2, _) = sub(&pair, 1, &c_args);
    member_event(&a, "member joined", &c_zid, 10);
    put_until_received(&pair, 0, "demo/mc/again", "three", &[&c2, &b]);
}

#[test]
fn weft_and_eclipse_zenoh_peers_exchange_data_over_a_multicast_group_both_ways() {
    let _serial = lock();
    let Some(python) = weft_testkit::zenoh_python() else {
        return;
    };
    let Some(pair) = NetPair::create("mc", 79, 2) else {
        return;
    };
    let script = weft_testkit::repo_root().join("tests/interop/zenoh_node.py");

    // weft -> Zenoh.
    let mut zsub = pair.cmd(0, &python);
    zsub.arg(&script).args([
        "--mode",
        "peer",
        "--listen",
        &group(&pair, 0),
        "--sub",
        "demo/mc/**",
        "--count",
        "100",
        "--timeout",
        "30",
    ]);
    let zsub = Proc::spawn(zsub);
    Proc::wait_line(&zsub.stdout, &["READY"], 20);
    put_until_received(&pair, 1, "demo/mc/to-zenoh", "from-weft", &[&zsub]);
    // Larger than a multicast batch (8192 bytes): fragments, reassembled by Zenoh.
    let large = "L".repeat(20_000);
    let (code, _, err) = run(
        weft(
            &pair,
            1,
            &[
                "put",
                "-l",
                &group(&pair, 1),
                "-k",
                "demo/mc/large",
                "-p",
                &large,
            ],
        ),
        15,
    );
    assert_eq!(code, Some(0), "put failed: {err}");
    assert!(
        received(&zsub, "\"len\": 20000", Duration::from_secs(5)),
        "Zenoh did not receive the fragmented value"
    );

    // Zenoh -> weft: weft takes the Zenoh peer as a member from its Join.
    let (wsub, _) = sub(&pair, 0, &[]);
    let mut zpub = pair.cmd(1, &python);
    zpub.arg(&script).args([
        "--mode",
        "peer",
        "--listen",
        &group(&pair, 1),
        "--put",
        "demo/mc/to-weft",
        "--payload",
        "from-zenoh",
        "--repeat",
        "40",
        "--interval",
        "0.25",
        "--timeout",
        "20",
    ]);
    let mut zpub = Proc::spawn(zpub);
    member_event(&wsub, "member joined", "", 20);
    assert!(
        received(&wsub, "from-zenoh", Duration::from_secs(15)),
        "weft received nothing from the Zenoh peer"
    );
    zpub.kill();
    // Zenoh's fragments, reassembled by weft.
    let mut zlarge = pair.cmd(1, &python);
    zlarge.arg(&script).args([
        "--mode",
        "peer",
        "--listen",
        &group(&pair, 1),
        "--put",
        "demo/mc/zenoh-large",
        "--size",
        "20000",
        "--repeat",
        "40",
        "--interval",
        "0.25",
        "--timeout",
        "20",
    ]);
    let _zlarge = Proc::spawn(zlarge);
    assert!(
        received(&wsub, "demo/mc/zenoh-large", Duration::from_secs(15)),
        "weft did not receive Zenoh's fragmented value"
    );
}

/// weftd, built (once per run) beside the `weft` binary under test, so that it is never
/// stale: cargo builds only this package's binaries for its tests.
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

#[test]
fn weftd_joins_a_group_from_its_configuration_and_routes_between_it_and_its_clients() {
    let _serial = lock();
    let Some(pair) = NetPair::create("mc", 79, 3) else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("weft-mcast-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tcp = format!("tcp/{}:7447", pair.addr[0]);
    let router = weftd_in(
        &pair,
        &dir.join("weftd.json5"),
        &format!(
            r#"{{ mode: "router",
                 listen: {{ endpoints: ["{tcp}", "{}", "{}"] }},
                 scouting: {{ multicast: {{ enabled: false }} }},
                 transport: {{ multicast: {{ join_interval: 300 }} }} }}"#,
            group(&pair, 0),
            second_group(&pair, 0)
        ),
    );
    Proc::wait_line(&router.stderr, &["member of multicast group", "17447"], 10);
    Proc::wait_line(&router.stderr, &["member of multicast group", "17448"], 10);
    Proc::wait_line(&router.stderr, &["listening on"], 10);
    let _ = std::fs::remove_dir_all(&dir);
    // No thread of its own per group: the I/O threads read the groups' sockets, the links
    // loop sends the Joins (compared with a router without groups below).
    assert!(
        !thread_names(router.id())
            .iter()
            .any(|n| n.starts_with("weft-mcast")),
        "a thread of its own for a group: {:?}",
        thread_names(router.id())
    );

    // A member of the second group, reached from a client through weftd.
    let (other, _) = sub_on(&pair, 1, &second_group(&pair, 1), &[]);
    publish_as_client_until(&pair, &tcp, "demo/mc/to-second", "reaches-second", &other);

    // Group -> router -> a client on TCP.
    let mut client = pair.cmd(0, env!("CARGO_BIN_EXE_weft"));
    client.args([
        "sub",
        "-m",
        "client",
        "-e",
        &tcp,
        "-k",
        "demo/mc/**",
        "--json",
    ]);
    let client = Proc::spawn(client);
    Proc::wait_line(&client.stderr, &["subscribed to"], 10);
    put_until_received(&pair, 1, "demo/mc/to-client", "via-weftd", &[&client]);
    // ... but not into the second group: what a group sent never goes to a group.
    assert!(
        !received(&other, "via-weftd", Duration::from_millis(500)),
        "weftd forwarded from one group into another"
    );

    // A client on TCP -> router -> the group.
    let (member, _) = sub(&pair, 1, &[]);
    member_event(&router, "member joined", "", 10);
    // weftd's Joins (its links loop's timers) reach the member.
    member_event(&member, "member joined", "", 10);
    publish_as_client_until(&pair, &tcp, "demo/mc/to-group", "from-client", &member);

    // The same router without groups, with a client too, runs as many threads.
    let plain_tcp = format!("tcp/{}:7449", pair.addr[0]);
    std::fs::create_dir_all(&dir).unwrap();
    let plain = weftd_in(
        &pair,
        &dir.join("plain.json5"),
        &format!(
            r#"{{ mode: "router",
                 listen: {{ endpoints: ["{plain_tcp}"] }},
                 scouting: {{ multicast: {{ enabled: false }} }} }}"#
        ),
    );
    Proc::wait_line(&plain.stderr, &["listening on"], 10);
    let _ = std::fs::remove_dir_all(&dir);
    let mut plain_client = pair.cmd(0, env!("CARGO_BIN_EXE_weft"));
    plain_client.args(["sub", "-m", "client", "-e", &plain_tcp, "-k", "demo/mc/**"]);
    let plain_client = Proc::spawn(plain_client);
    Proc::wait_line(&plain_client.stderr, &["subscribed to"], 10);
    let with_groups = thread_names(router.id());
    let without = thread_names(plain.id());
    assert_eq!(
        with_groups.len(),
        without.len(),
        "threads with two groups {with_groups:?}, without {without:?}"
    );
}

/// weftd in the pair's first namespace, with the configuration `json5` written to
/// `config` (logging at info).
fn weftd_in(pair: &NetPair, config: &std::path::Path, json5: &str) -> Proc {
    std::fs::write(config, json5).unwrap();
    let mut cmd = pair.cmd(0, &weftd_bin());
    cmd.env("RUST_LOG", "weft=info,weftd=info")
        .arg("-c")
        .arg(config);
    Proc::spawn(cmd)
}

/// The names of the threads of process `pid`.
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
                .map(|n| n.trim().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A second group, on another address and port.
fn second_group(pair: &NetPair, side: usize) -> String {
    format!("udp/224.0.0.225:17448#iface={}", pair.dev[side])
}

/// Publishes as a client of the router at `tcp` (namespace 0) until `sub` printed
/// `payload` (5 tries, one a second).
fn publish_as_client_until(pair: &NetPair, tcp: &str, key: &str, payload: &str, sub: &Proc) {
    for _ in 0..5 {
        let mut put = pair.cmd(0, env!("CARGO_BIN_EXE_weft"));
        put.args(["put", "-m", "client", "-e", tcp, "-k", key, "-p", payload]);
        let (code, _, err) = run(put, 15);
        assert_eq!(code, Some(0), "put failed: {err}");
        if received(sub, payload, Duration::from_secs(1)) {
            return;
        }
    }
    panic!("{payload:?} did not reach the group member from weftd's client");
}

#[test]
fn weft_members_exchange_data_over_an_ipv6_link_scoped_group() {
    let _serial = lock();
    let Some(pair) = NetPair::create("mc", 79, 4) else {
        return;
    };
    let v6 = |side: usize| format!("udp/[ff02::1:7]:17449#iface={}", pair.dev[side]);
    let (a, _) = sub_on(&pair, 0, &v6(0), &[]);
    for _ in 0..5 {
        let (code, _, err) = run(
            weft(
                &pair,
                1,
                &["put", "-l", &v6(1), "-k", "demo/mc/v6", "-p", "over-ipv6"],
            ),
            15,
        );
        assert_eq!(code, Some(0), "put failed: {err}");
        if received(&a, "over-ipv6", Duration::from_secs(1)) {
            return;
        }
    }
    panic!("nothing received over the IPv6 group");
}
