//! Security settings fail closed: a configuration asking for access control,
//! authentication or TLS that weft cannot honour stops weftd before it listens, with a
//! message naming the key.

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
            r#"{ access_control: { enabled: true, default_permission: "deny" } }"#,
            "access_control.enabled",
        ),
        (
            r#"{ transport: { auth: { pubkey: { public_key_file: "pub.pem" } } } }"#,
            "transport.auth.pubkey.public_key_file",
        ),
        (
            r#"{ transport: { link: { tls: { enable_mtls: true } } } }"#,
            "transport.link.tls.enable_mtls",
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
    let (code, stderr) = run_weftd(&["--cfg", "access_control/enabled:true"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("access_control.enabled"), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
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
