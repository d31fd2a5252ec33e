//! The session commands of `weft`, run as a user runs them.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use weft_testkit::{free_port, spawn_until_ready, wait_for_port, weft_router};

/// Peers of these tests reach each other on loopback only: no multicast scouting, and no
/// gossip (a gossiping peer given nowhere to listen listens on every interface).
const LOOPBACK_ONLY: [&str; 3] = [
    "--no-multicast-scouting",
    "--cfg",
    "scouting/gossip/enabled:false",
];

fn weft() -> Command {
    Command::new(env!("CARGO_BIN_EXE_weft"))
}

#[test]
fn put_sub_get_queryable_and_liveliness_between_weft_processes() {
    let port = free_port();
    let listen = format!("tcp/127.0.0.1:{port}");
    let sub = spawn_until_ready(
        weft()
            .args([
                "sub", "-l", &listen, "-k", "demo/**", "--json", "--count", "2",
            ])
            .args(LOOPBACK_ONLY)
            .stdout(Stdio::piped()),
        "subscribed to demo/**",
    );
    let ok = weft()
        .args(["put", "-e", &listen, "-k", "demo/a", "-p", "hello"])
        .args(LOOPBACK_ONLY)
        .args(["--encoding", "text/plain", "--attach", "meta"])
        .status()
        .unwrap();
    assert!(ok.success());
    assert!(weft()
        .args(["delete", "-e", &listen, "-k", "demo/a"])
        .args(LOOPBACK_ONLY)
        .status()
        .unwrap()
        .success());
    let out = sub.wait_with_output().unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["kind"], "put");
    assert_eq!(lines[0]["key"], "demo/a");
    assert_eq!(lines[0]["payload"], "hello");
    assert_eq!(lines[0]["encoding"], "text/plain");
    assert_eq!(lines[0]["attachment"], "meta");
    assert_eq!(lines[1]["kind"], "delete");

    // A queryable answering with its own key, and a get printing JSON.
    let port = free_port();
    let listen = format!("tcp/127.0.0.1:{port}");
    let mut queryable = weft();
    queryable
        .args([
            "queryable",
            "-l",
            &listen,
            "-k",
            "q/fixed",
            "-p",
            "answer",
            "--count",
            "1",
        ])
        .args(LOOPBACK_ONLY)
        .stdout(Stdio::piped());
    let mut queryable = spawn_until_ready(&mut queryable, "answering queries on q/fixed");
    let out = weft()
        .args([
            "get",
            "-e",
            &listen,
            "-s",
            "q/*?x=1",
            "--json",
            "--timeout",
            "5000",
        ])
        .args(LOOPBACK_ONLY)
        .output()
        .unwrap();
    assert!(out.status.success());
    let reply: serde_json::Value =
        serde_json::from_str(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
    assert_eq!(reply["ok"], true);
    assert_eq!(reply["key"], "q/fixed");
    assert_eq!(reply["payload"], "answer");
    let mut line = String::new();
    BufReader::new(queryable.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "query q/*?x=1");
    assert!(queryable.wait().unwrap().success());

    // Liveliness: a token seen by a get.
    let port = free_port();
    let listen = format!("tcp/127.0.0.1:{port}");
    let mut token = spawn_until_ready(
        weft()
            .args(["liveliness", "token", "-l", &listen, "-k", "robots/r1"])
            .args(LOOPBACK_ONLY),
        "robots/r1 is alive",
    );
    let out = weft()
        .args([
            "liveliness",
            "get",
            "-e",
            &listen,
            "-k",
            "robots/**",
            "--json",
        ])
        .args(LOOPBACK_ONLY)
        .args(["--timeout", "2000"])
        .output()
        .unwrap();
    let _ = token.kill();
    let _ = token.wait();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        r#"{"key":"robots/r1"}"#
    );
}

#[test]
fn bad_flags_and_values_exit_2_with_a_message() {
    for args in [
        vec!["put", "-k", "demo//a", "-p", "x"],
        vec!["put", "-m", "server", "-k", "a"],
        vec!["put", "-e", "localhost:7447", "-k", "a"],
        vec!["sub", "-k", "a//b"],
        vec!["put", "-k", "a", "--priority", "9"],
    ] {
        // Host interfaces are never scouted by tests.
        let out = weft().args(&args).args(LOOPBACK_ONLY).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty(), "{args:?}: no message");
    }
    let dir = std::env::temp_dir().join(format!("weft-cli-{}.json5", std::process::id()));
    std::fs::write(&dir, r#"{ transport: { link: { tx: { lease: -1 } } } }"#).unwrap();
    let out = weft()
        .args(["sub", "-c", dir.to_str().unwrap(), "-k", "a"])
        .args(LOOPBACK_ONLY)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("transport.link.tx.lease"));
}

#[test]
fn a_configuration_with_security_settings_weft_cannot_honour_is_refused() {
    let path = std::env::temp_dir().join(format!("weft-cli-acl-{}.json5", std::process::id()));
    let text = "{ transport: { auth: { pubkey: { known_keys_file: \"keys.pem\" } } } }";
    std::fs::write(&path, text).unwrap();
    let out = weft()
        .args([
            "put",
            "-k",
            "demo/a",
            "-p",
            "x",
            "--no-multicast-scouting",
            "-c",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("transport.auth.pubkey.known_keys_file"),
        "{stderr}"
    );
}

#[test]
fn acl_check_says_what_decides_and_exits_by_the_decision() {
    let path =
        std::env::temp_dir().join(format!("weft-cli-acl-check-{}.json5", std::process::id()));
    let text = r#"{ access_control: { enabled: true, default_permission: "deny",
        rules: [ { id: "demo", messages: ["put"], flows: ["ingress"], permission: "allow",
                   key_exprs: ["demo/**"] },
                 { id: "no-secret", messages: ["put"], permission: "deny",
                   key_exprs: ["demo/secret/**"] } ],
        subjects: [ { id: "local", interfaces: ["lo"] } ],
        policies: [ { id: "p", rules: ["demo", "no-secret"], subjects: ["local"] } ] } }"#;
    std::fs::write(&path, text).unwrap();
    let check = |key: &str, interface: &str| {
        weft()
            .args([
                "acl",
                "check",
                "--message",
                "put",
                "--flow",
                "ingress",
                "-k",
                key,
            ])
            .args(["--interface", interface, "-c"])
            .arg(&path)
            .output()
            .unwrap()
    };
    let out = check("demo/a", "lo");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "allow: rule \"demo\" (key demo/**) for subject \"local\" in policy \"p\""
    );
    let out = check("demo/secret/a", "lo");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("rule \"no-secret\""));
    let out = check("demo/a", "eth0");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("no subject matches"));
    let _ = std::fs::remove_file(&path);
}

/// `weft acl check` warns of a deny rule that a wildcard gets around (the decision
/// itself unchanged), and not once `deny_intersecting` closes it.
#[test]
fn acl_check_warns_of_a_deny_rule_a_wildcard_gets_around() {
    let path =
        std::env::temp_dir().join(format!("weft-cli-acl-bypass-{}.json5", std::process::id()));
    let config = |extra: &str| {
        format!(
            r#"{{ access_control: {{ enabled: true, default_permission: "deny", {extra}
            rules: [ {{ id: "demo", messages: ["put"], permission: "allow",
                        key_exprs: ["demo/**"] }},
                     {{ id: "no-secret", messages: ["put"], permission: "deny",
                        key_exprs: ["demo/secret/**"] }} ],
            subjects: [ {{ id: "local", interfaces: ["lo"] }} ],
            policies: [ {{ rules: ["demo", "no-secret"], subjects: ["local"] }} ] }} }}"#
        )
    };
    let check = |key: &str| {
        let out = weft()
            .args(["acl", "check", "--message", "put", "--flow", "ingress"])
            .args(["-k", key, "--interface", "lo", "-c"])
            .arg(&path)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    std::fs::write(&path, config("")).unwrap();
    let (code, stderr) = check("demo/*/**");
    assert_eq!(code, Some(0), "Zenoh's semantics: allowed");
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "one line per rule: {stderr}");
    assert!(
        warnings[0].contains(
            r#"deny rule "no-secret" (put ingress on demo/secret/**) can be bypassed: a put on demo/*/**"#
        ),
        "{stderr}"
    );
    std::fs::write(&path, config("deny_intersecting: true,")).unwrap();
    let (code, stderr) = check("demo/*/**");
    assert_eq!(code, Some(1), "deny_intersecting: denied");
    assert!(stderr.is_empty(), "{stderr}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn mqtt_and_nats_wildcards_are_refused_with_zenohs_equivalents() {
    for args in [
        vec!["sub", "-k", "robot/+/pose"],
        vec!["sub", "-k", "robot/#"],
        vec!["sub", "-k", "robot/>"],
        vec!["get", "-s", "robot/+/pose?x=1"],
        vec!["liveliness", "sub", "-k", "#"],
    ] {
        let out = weft().args(&args).args(LOOPBACK_ONLY).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("use * for one chunk, ** for many"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn forty_one_shot_puts_all_reach_a_zenoh_subscriber() {
    const PUTS: usize = 40;
    let (_router, port) = weft_router();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let Some(subscriber) = weft_testkit::ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &endpoint,
        "--sub",
        "oneshot/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]) else {
        return;
    };
    let put = |key: &str| {
        let ok = weft()
            .args(["put", "-m", "client", "-e", &endpoint, "-k", key, "-p", "x"])
            .args(LOOPBACK_ONLY)
            .status()
            .unwrap();
        assert!(ok.success());
    };
    // A first key is put until the subscriber has it: the router knows it then.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        put("oneshot/first");
        if subscriber
            .lines
            .recv_timeout(Duration::from_millis(500))
            .is_ok()
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the Zenoh subscriber never got a first put"
        );
    }
    for n in 0..PUTS {
        put(&format!("oneshot/{n}"));
    }
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < PUTS {
        let Ok(line) = subscriber.lines.recv_timeout(Duration::from_secs(10)) else {
            panic!(
                "the Zenoh subscriber got {} of {PUTS} one-shot puts",
                keys.len()
            );
        };
        let sample: serde_json::Value = serde_json::from_str(&line).unwrap();
        let key = sample["key"].as_str().unwrap().to_string();
        if key != "oneshot/first" {
            keys.insert(key);
        }
    }
}

#[test]
fn rust_log_shows_the_library_logs() {
    let (_router, port) = weft_router();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let quiet = weft()
        .args([
            "put", "-m", "client", "-e", &endpoint, "-k", "log/a", "-p", "x",
        ])
        .args(LOOPBACK_ONLY)
        .output()
        .unwrap();
    assert!(quiet.status.success());
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
    let logged = weft()
        .args([
            "put", "-m", "client", "-e", &endpoint, "-k", "log/a", "-p", "x",
        ])
        .args(LOOPBACK_ONLY)
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(logged.status.success());
    let stderr = String::from_utf8_lossy(&logged.stderr);
    assert!(
        stderr.contains("session open") && stderr.contains("peer="),
        "{stderr}"
    );
    let json = weft()
        .args([
            "put", "-m", "client", "-e", &endpoint, "-k", "log/a", "-p", "x",
        ])
        .args(["--no-multicast-scouting", "--log-format", "json"])
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(json.status.success());
    let opened: Vec<serde_json::Value> = String::from_utf8_lossy(&json.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .filter(|e: &serde_json::Value| e["fields"]["message"] == "session open")
        .collect();
    assert_eq!(opened.len(), 1, "{opened:?}");
    assert_eq!(opened[0]["fields"]["whatami"], "router");
}

#[test]
fn zenoh_examples_flags_and_suggestions() {
    let (router, port) = weft_router();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    // A queryable that answers with the query's payload.
    let _q = router
        .declare_queryable("flag/**", true, |q| {
            let body = q.payload().map(|p| p.0.clone()).unwrap_or_default();
            q.reply(q.key_expr(), &body, &weft::PutOptions::default())
                .unwrap();
        })
        .unwrap();
    // Zenoh's z_get flags: -s SELECTOR -p PAYLOAD -t TARGET -o TIMEOUT_MS.
    let out = weft()
        .args([
            "get", "-m", "client", "-e", &endpoint, "-s", "flag/a", "-p", "question",
        ])
        .args([
            "-t",
            "ALL",
            "-o",
            "5000",
            "--json",
            "--no-multicast-scouting",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(reply["payload"], "question");
    // A typo gets a suggestion.
    let out = weft().args(["get", "--selectr", "a"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'--selector'"));
}

/// Zenoh's tools' session flags (`--cfg`, `-m router`, `--enable-shm`) and its perf
/// examples' flags (`z_sub_thr -n -s`, `z_pub_thr -p -t -n`, `z_ping -n -w --no-express`,
/// `z_pong --no-express`, `z_put -a`).
#[test]
fn zenoh_tools_session_and_perf_flags() {
    let port = free_port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    // A router made by the CLI itself (`-m router`), listening where `--cfg` says.
    let listen_cfg = format!("listen/endpoints:[\"{endpoint}\"]");
    let mut router = weft()
        .args([
            "sub",
            "-m",
            "router",
            "--cfg",
            &listen_cfg,
            "-k",
            "cfg/**",
            "--count",
            "1",
        ])
        .args(["--cfg", "scouting/multicast/enabled:false"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, printed) = std::sync::mpsc::channel();
    let stdout = router.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    wait_for_port(port);
    // The router listens before its subscriber is declared: a client puts until the
    // router's own subscriber prints what it got.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let line = loop {
        let put = weft()
            .args([
                "put",
                "-m",
                "client",
                "-e",
                &endpoint,
                "--no-multicast-scouting",
            ])
            .args(["-k", "cfg/x", "-p", "through a CLI router", "-a", "meta"])
            .output()
            .unwrap();
        assert!(
            put.status.success(),
            "{}",
            String::from_utf8_lossy(&put.stderr)
        );
        if let Ok(line) = printed.recv_timeout(Duration::from_millis(200)) {
            break line;
        }
        if std::time::Instant::now() > deadline {
            let _ = router.kill();
            panic!("the CLI router's subscriber got nothing");
        }
    };
    assert!(line.contains("through a CLI router"), "{line}");
    assert!(router.wait().unwrap().success());

    // A --cfg that does not parse, and --enable-shm: refused, naming them.
    for (args, named) in [
        (vec!["sub", "-k", "a", "--cfg", "mode"], "--cfg \"mode\""),
        (vec!["sub", "-k", "a", "--enable-shm"], "--enable-shm"),
    ] {
        let out = weft().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(named),
            "{args:?}"
        );
    }

    // Perf flags, peer to peer: z_pong/z_ping and z_sub_thr/z_pub_thr style.
    let pong_port = free_port();
    let pong_endpoint = format!("tcp/127.0.0.1:{pong_port}");
    let mut pong = weft()
        .args(["pong", "-l", &pong_endpoint, "--no-express"])
        .args(LOOPBACK_ONLY)
        .spawn()
        .unwrap();
    wait_for_port(pong_port);
    let ping = weft()
        .args(["ping", "8", "-e", &pong_endpoint])
        .args(LOOPBACK_ONLY)
        .args(["-n", "50", "-w", "0.2", "--no-express"])
        .output()
        .unwrap();
    let _ = pong.kill();
    let _ = pong.wait();
    assert!(
        ping.status.success(),
        "{}",
        String::from_utf8_lossy(&ping.stderr)
    );
    assert!(String::from_utf8_lossy(&ping.stdout).contains("p50_us="));

    let thr_port = free_port();
    let thr_endpoint = format!("tcp/127.0.0.1:{thr_port}");
    let sub = weft()
        .args(["sub-thr", "-l", &thr_endpoint])
        .args(LOOPBACK_ONLY)
        .args(["-n", "1000", "-s", "2", "--max-seconds", "30"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_port(thr_port);
    let publisher = weft()
        .args(["pub-thr", "8", "-e", &thr_endpoint])
        .args(LOOPBACK_ONLY)
        .args(["-p", "5", "-t", "-n", "1000", "--duration", "2"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let measured = sub.wait_with_output().unwrap();
    // It publishes for 2 s, printing its rate every 1,000 messages.
    let published = publisher.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&measured.stdout);
    assert_eq!(text.matches("round ").count(), 2, "{text}");
    assert!(String::from_utf8_lossy(&published.stdout).contains(" msg/s"));
}
