//! User/password authentication against Eclipse Zenoh 1.10.2: Zenoh clients on a weft
//! router with a dictionary, and weft sessions on Zenoh nodes with one, with the right
//! credentials (data flows), wrong ones and none (refused).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use weft::{Config, PutOptions};
use weft_testkit::{free_port, ZenohNode};

const DICTIONARY: &str = "alice:wonderland\nbob:builder\n";

/// A dictionary file in a directory of this test process's own.
fn dictionary_file(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("weft-usrpwd-interop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, DICTIONARY).unwrap();
    path.to_string_lossy().into_owned()
}

/// A weft session from a JSON5 configuration.
fn weft_session(json5: &str) -> Result<weft::Session, weft::OpenError> {
    let (config, warnings) = Config::from_json5(json5).expect("a valid configuration");
    assert!(warnings.is_empty(), "{warnings:?}");
    weft::open(config)
}

/// A weft router on `endpoint` accepting the users of [`DICTIONARY`].
fn weft_router(endpoint: &str, name: &str) -> weft::Session {
    let dict = dictionary_file(name);
    weft_session(&format!(
        r#"{{ mode: "router", listen: {{ endpoints: ["{endpoint}"] }},
              scouting: {{ multicast: {{ enabled: false }} }},
              transport: {{ auth: {{ usrpwd: {{ dictionary_file: {dict:?} }} }} }} }}"#
    ))
    .expect("open the weft router")
}

/// The configuration of a weft session of `mode` connecting to `endpoint`, presenting
/// `credentials` if any.
fn weft_connecting(mode: &str, endpoint: &str, credentials: Option<(&str, &str)>) -> String {
    let auth = credentials.map_or(String::new(), |(user, password)| {
        format!(
            r#", transport: {{ auth: {{ usrpwd: {{ user: "{user}", password: "{password}" }} }} }}"#
        )
    });
    format!(
        r#"{{ mode: "{mode}", connect: {{ endpoints: ["{endpoint}"] }},
              scouting: {{ multicast: {{ enabled: false }} }} {auth} }}"#
    )
}

/// Zenoh node arguments presenting `user` and `password`.
fn zenoh_credentials<'a>(user: &'a str, password: &'a str) -> [&'a str; 4] {
    ["--usrpwd-user", user, "--usrpwd-password", password]
}

/// Publishes on `key` from `weft` until the Zenoh node prints a sample of `key`, within
/// 10 s; returns it.
fn publish_until_received(weft: &weft::Session, key: &str, zenoh: &ZenohNode) -> serde_json::Value {
    let publisher = weft.declare_publisher(key, PutOptions::default()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        publisher.put(b"authenticated").unwrap();
        if let Ok(line) = zenoh.lines.recv_timeout(Duration::from_millis(100)) {
            if !line.starts_with('{') {
                continue;
            }
            let sample: serde_json::Value = serde_json::from_str(&line).unwrap();
            if sample["key"] == key {
                return sample;
            }
        }
    }
    panic!("no sample reached the Zenoh node within 10 s");
}

#[test]
fn zenoh_clients_with_the_right_credentials_exchange_data_through_a_weft_router() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let router = weft_router(&endpoint, "router-ok.txt");
    let (_sub, rx) = router
        .declare_subscriber_channel("demo/auth/**", 64)
        .unwrap();

    // Zenoh → weft.
    let mut args = vec!["--mode", "client", "--connect", &endpoint];
    args.extend(zenoh_credentials("alice", "wonderland"));
    args.extend([
        "--put",
        "demo/auth/from-zenoh",
        "--payload",
        "hello",
        "--repeat",
        "50",
    ]);
    let Some(publisher) = ZenohNode::launch(&args) else {
        return;
    };
    assert_eq!(publisher.line(20), "READY");
    let sample = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a sample from the authenticated Zenoh client");
    assert_eq!(sample.key_expr, "demo/auth/from-zenoh");
    assert_eq!(sample.payload, b"hello");

    // weft → Zenoh, to a client authenticated as another user.
    let mut args = vec!["--mode", "client", "--connect", &endpoint];
    args.extend(zenoh_credentials("bob", "builder"));
    args.extend([
        "--sub",
        "demo/auth/from-weft",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]);
    let subscriber = ZenohNode::launch(&args).unwrap();
    assert_eq!(subscriber.line(20), "READY");
    let sample = publish_until_received(&router, "demo/auth/from-weft", &subscriber);
    assert_eq!(sample["payload"], "authenticated");
}

#[test]
fn a_weft_router_refuses_zenoh_clients_with_wrong_or_no_credentials() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let _router = weft_router(&endpoint, "router-refuse.txt");
    let cases: [&[&str]; 3] = [
        &zenoh_credentials("alice", "looking-glass"),
        &zenoh_credentials("carol", "wonderland"),
        &[],
    ];
    for credentials in cases {
        let mut args = vec!["--mode", "client", "--connect", &endpoint, "--timeout", "5"];
        args.extend(credentials);
        let Some(client) = ZenohNode::launch(&args) else {
            return;
        };
        let first = client.line(20);
        assert!(
            first.starts_with("OPEN_FAILED"),
            "{credentials:?} was accepted: {first}"
        );
        eprintln!("{credentials:?}: {first}");
        assert!(!client.wait(), "the refused node exits with an error");
    }
    // The router was there all along: the right credentials still open.
    let mut args = vec!["--mode", "client", "--connect", &endpoint, "--timeout", "1"];
    args.extend(zenoh_credentials("bob", "builder"));
    let client = ZenohNode::launch(&args).unwrap();
    assert_eq!(client.line(20), "READY");
}

/// A Zenoh node of `mode` listening on a fresh endpoint with [`DICTIONARY`] (and
/// credentials of its own for other routers), subscribed to `demo/weft/**`.
fn zenoh_with_dictionary(mode: &str, name: &str) -> Option<(ZenohNode, String)> {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let dict = dictionary_file(name);
    let mut args = vec!["--mode", mode, "--listen", &endpoint];
    args.extend(["--usrpwd-dictionary", &dict]);
    args.extend([
        "--sub",
        "demo/weft/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]);
    let node = ZenohNode::start(&args)?;
    Some((node, endpoint))
}

#[test]
fn weft_sessions_with_the_right_credentials_publish_to_zenoh_nodes_with_a_dictionary() {
    for (zenoh_mode, weft_mode) in [("router", "client"), ("peer", "peer")] {
        let Some((zenoh, endpoint)) = zenoh_with_dictionary(zenoh_mode, "zenoh-ok.txt") else {
            return;
        };
        let config = weft_connecting(weft_mode, &endpoint, Some(("alice", "wonderland")));
        let weft = weft_session(&config).expect("open the weft session");
        let sample = publish_until_received(&weft, "demo/weft/auth", &zenoh);
        assert_eq!(sample["key"], "demo/weft/auth", "on a Zenoh {zenoh_mode}");
        assert_eq!(sample["payload"], "authenticated");
        weft.close();
    }
}

#[test]
fn a_zenoh_router_with_a_dictionary_refuses_weft_clients_with_wrong_or_no_credentials() {
    let Some((_zenoh, endpoint)) = zenoh_with_dictionary("router", "zenoh-refuse.txt") else {
        return;
    };
    for credentials in [
        Some(("alice", "looking-glass")),
        Some(("carol", "wonderland")),
        None,
    ] {
        let config = weft_connecting("client", &endpoint, credentials);
        let refused = weft_session(&config);
        let Err(e) = refused else {
            panic!("{credentials:?} was accepted");
        };
        assert!(
            matches!(e, weft::OpenError::Refused { .. }),
            "{credentials:?}: {e}"
        );
        eprintln!("{credentials:?}: {e}");
        // Zenoh closes the link with GENERIC.
        assert!(e.to_string().contains("GENERIC"), "{credentials:?}: {e}");
    }
}

#[test]
fn a_weft_client_with_credentials_refuses_a_zenoh_router_that_does_not_ask_for_them() {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let Some(_zenoh) =
        ZenohNode::start(&["--mode", "router", "--listen", &endpoint, "--timeout", "60"])
    else {
        return;
    };
    let config = weft_connecting("client", &endpoint, Some(("alice", "wonderland")));
    let Err(e) = weft_session(&config) else {
        panic!("the session must not open");
    };
    assert!(
        e.to_string().contains("no user/password authentication"),
        "{e}"
    );
}

#[test]
fn routers_with_credentials_and_dictionaries_connect_to_each_other_both_ways() {
    // A Zenoh router connecting to a weft router: the weft router checks it.
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let dict = dictionary_file("r2r-weft.txt");
    let weft = weft_session(&format!(
        r#"{{ mode: "router", listen: {{ endpoints: ["{endpoint}"] }},
              scouting: {{ multicast: {{ enabled: false }} }},
              transport: {{ auth: {{ usrpwd: {{ user: "alice", password: "wonderland",
                                                dictionary_file: {dict:?} }} }} }} }}"#
    ))
    .expect("open the weft router");
    let mut args = vec!["--mode", "router", "--connect", &endpoint];
    args.extend(zenoh_credentials("bob", "builder"));
    args.extend(["--usrpwd-dictionary", &dict]);
    args.extend([
        "--sub",
        "demo/weft/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]);
    let Some(zenoh) = ZenohNode::start(&args) else {
        return;
    };
    let sample = publish_until_received(&weft, "demo/weft/to-zenoh-router", &zenoh);
    assert_eq!(sample["payload"], "authenticated");
    drop(zenoh);
    weft.close();

    // A weft router connecting to a Zenoh router: the Zenoh router checks it.
    let Some((zenoh, endpoint)) = zenoh_with_dictionary("router", "r2r-zenoh.txt") else {
        return;
    };
    let weft = weft_session(&format!(
        r#"{{ mode: "router", connect: {{ endpoints: ["{endpoint}"] }},
              scouting: {{ multicast: {{ enabled: false }} }},
              transport: {{ auth: {{ usrpwd: {{ user: "bob", password: "builder",
                                                dictionary_file: {dict:?} }} }} }} }}"#
    ))
    .expect("open the weft router");
    let sample = publish_until_received(&weft, "demo/weft/r2r", &zenoh);
    assert_eq!(sample["payload"], "authenticated");
}
