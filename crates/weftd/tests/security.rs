//! Security settings fail closed: a configuration asking for authentication or TLS that
//! weft cannot honour, or holding a mistake in its access control, stops weftd before it
//! listens, with a message naming the key; access control is enforced as Zenoh's router
//! enforces it.

mod common;

use std::process::Command;

use common::Weftd;
use weft_testkit::free_port;

/// Runs weftd with `args` on a free port; returns its exit code and what it printed on
/// stderr. It must exit on its own (it is refused before listening).
fn run_weftd(args: &[&str]) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_weftd"))
        .args(args)
        .args(["--no-multicast-scouting", "-l"])
        .arg(format!("tcp/127.0.0.1:{}", free_port()))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn weftd_refuses_to_start_with_security_settings_it_cannot_honour() {
    let dir = std::env::temp_dir().join(format!("weftd-security-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (
            r#"{ transport: { auth: { pubkey: { public_key_file: "pub.pem" } } } }"#,
            "transport.auth.pubkey.public_key_file",
        ),
        (
            r#"{ transport: { link: { tls: { certificate_revocation_list: "crl.pem" } } } }"#,
            "transport.link.tls.certificate_revocation_list",
        ),
    ];
    for (n, (text, key)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("case{n}.json5"));
        std::fs::write(&path, text).unwrap();
        let (code, stderr) = run_weftd(&["-c", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{text}: {stderr}");
        assert!(stderr.contains(key), "{text}: {stderr}");
        assert!(stderr.contains("refuses to run"), "{text}: {stderr}");
    }
    // The same through --cfg.
    let (code, stderr) = run_weftd(&["--cfg", "transport/auth/pubkey/key_size:2048"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("transport.auth.pubkey.key_size"),
        "{stderr}"
    );
    // A mistake in the section is refused, naming the field, even when disabled.
    let (code, stderr) = run_weftd(&[
        "--cfg",
        "access_control:{enabled:false,rules:[{id:'r',messages:['publish'],permission:'allow',key_exprs:['a']}]}",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("access_control.rules[0].messages"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// An access-control policy exercising both flows, a deny rule inside an allow rule, and
/// a key outside every rule.
const ACL: &str = r#"{ enabled: true, default_permission: "deny",
  rules: [
    { id: "publish", messages: ["put"], flows: ["ingress"], permission: "allow",
      key_exprs: ["demo/**"] },
    { id: "subscribe", messages: ["declare_subscriber"], flows: ["ingress"],
      permission: "allow", key_exprs: ["demo/**", "other/**"] },
    { id: "deliver", messages: ["put", "declare_subscriber"], flows: ["egress"],
      permission: "allow", key_exprs: ["demo/**"] },
    { id: "secret", messages: ["put"], permission: "deny", key_exprs: ["demo/secret/**"] },
    { id: "admin", messages: ["query", "reply"], permission: "allow", key_exprs: ["@/**"] },
  ],
  subjects: [ { id: "loopback", interfaces: ["lo"] } ],
  policies: [ { id: "clients", rules: ["publish", "subscribe", "deliver", "secret", "admin"],
                subjects: ["loopback"] } ] }"#;

/// What a weft client subscribed to `demo/**` and `other/**` receives of a weft client's
/// puts on a few keys through the router at `port` (up to an end marker); `then` runs
/// before both close.
fn delivered_through(port: u16, then: impl FnOnce()) -> Vec<String> {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let client = || {
        weft::open(weft::Config {
            mode: weft::WhatAmI::Client,
            multicast_scouting: false,
            connect: vec![endpoint.parse().unwrap()],
            ..weft::Config::default()
        })
        .unwrap()
    };
    let subscriber = client();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut subs = Vec::new();
    for key in ["demo/**", "other/**"] {
        let seen = seen.clone();
        subs.push(
            subscriber
                .declare_subscriber(key, move |s| {
                    seen.lock().unwrap().push(s.key_expr.to_string())
                })
                .unwrap(),
        );
    }
    let publisher = client();
    let options = weft::PutOptions::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    let arrived = |key: &str| seen.lock().unwrap().iter().any(|k| k == key);
    while !arrived("demo/warmup") {
        assert!(Instant::now() < deadline, "nothing reached the subscriber");
        publisher.put("demo/warmup", b"w", &options).unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
    for key in ["demo/a", "demo/secret/b", "other/c", "demo/end"] {
        publisher.put(key, b"x", &options).unwrap();
    }
    while !arrived("demo/end") {
        assert!(Instant::now() < deadline, "the end marker did not arrive");
        std::thread::sleep(Duration::from_millis(10));
    }
    let got: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|k| !["demo/warmup", "demo/end"].contains(&k.as_str()))
        .cloned()
        .collect();
    then();
    drop(subs);
    publisher.close();
    subscriber.close();
    got
}

#[test]
fn weftd_enforces_access_control_as_zenohs_router_does() {
    let config = format!("{{ access_control: {ACL} }}");
    let port = free_port();
    let weftd = Weftd::with_config(port, &config, &[]);
    let denied_in_admin_space = || {
        let admin = weftd.weft_client();
        let replies: Vec<_> = admin
            .get("@/*/router", &weft::GetOptions::default())
            .unwrap()
            .iter()
            .collect();
        let reply = replies.first().expect("the admin space answered");
        let router: serde_json::Value =
            serde_json::from_slice(&reply.result.as_ref().unwrap().payload).unwrap();
        admin.close();
        router["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["counters"]["denied"].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    let mut denied = 0;
    let got = delivered_through(port, || denied = denied_in_admin_space());
    assert_eq!(got, ["demo/a"], "through weftd");
    // demo/secret/b and other/c at least, counted on the publisher's session.
    assert!(denied >= 2, "denials counted: {denied}");
    drop(weftd);

    // The same clients through Zenoh's router with the same policy.
    let port = free_port();
    let endpoint = format!("tcp/127.0.0.1:{port}");
    let insert = format!("access_control={ACL}");
    let Some(_zenoh) = weft_testkit::ZenohNode::start(&[
        "--mode",
        "router",
        "--listen",
        &endpoint,
        "--insert",
        &insert,
        "--timeout",
        "60",
    ]) else {
        return;
    };
    assert_eq!(
        delivered_through(port, || ()),
        ["demo/a"],
        "through Zenoh's router"
    );
}

#[test]
fn weftd_refuses_to_start_with_a_bad_usrpwd_dictionary() {
    let dir = std::env::temp_dir().join(format!("weftd-usrpwd-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("users.txt");
    std::fs::write(&bad, "alice:wonderland\nbob\n").unwrap();
    let missing = dir.join("missing.txt");
    for (file, reason) in [
        (&bad, "line 2: expected `user:password`"),
        (&missing, "No such file"),
    ] {
        let text = format!(
            "{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {:?} }} }} }} }}",
            file.to_str().unwrap()
        );
        let path = dir.join("config.json5");
        std::fs::write(&path, text).unwrap();
        let (code, stderr) = run_weftd(&["-c", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(
            stderr.contains("`transport.auth.usrpwd.dictionary_file`"),
            "{stderr}"
        );
        assert!(stderr.contains(reason), "{stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The configuration of a weft client of `endpoint` presenting `credentials`, if any.
fn client_config(endpoint: &str, credentials: Option<(&str, &str)>) -> weft::Config {
    let auth = credentials.map_or(String::new(), |(user, password)| {
        format!(
            r#", transport: {{ auth: {{ usrpwd: {{ user: "{user}", password: "{password}" }} }} }}"#
        )
    });
    let text = format!(
        r#"{{ mode: "client", connect: {{ endpoints: ["{endpoint}"] }},
              scouting: {{ multicast: {{ enabled: false }} }} {auth} }}"#
    );
    weft::Config::from_json5(&text).unwrap().0
}

#[test]
fn weftd_with_a_dictionary_accepts_known_users_only() {
    let dir = std::env::temp_dir().join(format!("weftd-usrpwd-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let users = dir.join("users.txt");
    std::fs::write(&users, "alice:wonderland\n").unwrap();
    let config = format!(
        "{{ transport: {{ auth: {{ usrpwd: {{ dictionary_file: {:?} }} }} }} }}",
        users.to_str().unwrap()
    );
    let weftd = Weftd::with_config(free_port(), &config, &[]);
    for refused in [
        Some(("alice", "looking-glass")),
        Some(("carol", "wonderland")),
        None,
    ] {
        let Err(e) = weft::open(client_config(&weftd.endpoint, refused)) else {
            panic!("{refused:?} was accepted");
        };
        assert!(e.to_string().contains("GENERIC"), "{refused:?}: {e}");
    }
    let alice = weft::open(client_config(
        &weftd.endpoint,
        Some(("alice", "wonderland")),
    ))
    .expect("alice is accepted");
    // Data flows through the router between two authenticated clients.
    let (_sub, rx) = alice
        .declare_subscriber_channel("demo/auth/**", 16)
        .unwrap();
    let other = weft::open(client_config(
        &weftd.endpoint,
        Some(("alice", "wonderland")),
    ))
    .expect("a second session of alice");
    let publisher = other
        .declare_publisher("demo/auth/x", weft::PutOptions::default())
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let sample = loop {
        assert!(
            std::time::Instant::now() < deadline,
            "no sample within 10 s"
        );
        publisher.put(b"through weftd").unwrap();
        if let Ok(s) = rx.recv_timeout(std::time::Duration::from_millis(100)) {
            break s;
        }
    };
    assert_eq!(sample.payload, b"through weftd");
    let _ = std::fs::remove_dir_all(&dir);
}
