//! weftd as a TLS router: its certificate, key and CA given inline in base64 in its
//! configuration, mTLS on; a weft client and an Eclipse Zenoh client, each with a
//! certificate of the CA, exchange data through it.

use std::time::{Duration, Instant};

use weft::{Config, PutOptions, WhatAmI};
use weft_testkit::certs::{base64, Pki};
use weft_testkit::{free_port, ZenohNode};

mod common;
use common::{raise_open_files_limit, threads, wait_for_port, Weftd};

#[test]
fn weftd_routes_between_weft_and_zenoh_clients_over_mtls() {
    let pki = Pki::new("weftd");
    let read = |path: &str| std::fs::read_to_string(path).unwrap();
    let config = format!(
        r#"{{ transport: {{ link: {{ tls: {{
            root_ca_certificate_base64: "{}",
            listen_certificate_base64: "{}",
            listen_private_key_base64: "{}",
            enable_mtls: true,
        }} }} }} }}"#,
        base64(&read(&pki.ca)),
        base64(&read(&pki.server_cert)),
        base64(&read(&pki.server_key)),
    );
    let tls_port = free_port();
    let tls_endpoint = format!("tls/127.0.0.1:{tls_port}");
    let _weftd = Weftd::with_config(free_port(), &config, &["-l", &tls_endpoint]);
    wait_for_port(tls_port);

    let Some(zenoh) = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &tls_endpoint,
        "--tls-root-ca",
        &pki.ca,
        "--tls-mtls",
        "--tls-connect-cert",
        &pki.client_cert,
        "--tls-connect-key",
        &pki.client_key,
        "--sub",
        "demo/tls/**",
        "--count",
        "1000",
        "--timeout",
        "60",
    ]) else {
        return;
    };
    let weft = weft::open(Config {
        mode: WhatAmI::Client,
        multicast_scouting: false,
        connect: vec![tls_endpoint
            .replace("127.0.0.1", "localhost")
            .parse()
            .unwrap()],
        tls: pki.connecting(true),
        ..Config::default()
    })
    .expect("a weft client of weftd over mTLS");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        weft.put("demo/tls/a", b"through weftd", &PutOptions::default())
            .unwrap();
        if let Ok(line) = zenoh.lines.recv_timeout(Duration::from_millis(100)) {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["payload"], "through weftd");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "nothing reached the Zenoh client"
        );
    }
}

/// 1,000 TLS client sessions (mTLS on) on one weftd: all open, each is served (one put
/// reaches every one of them), and weftd stays within its I/O threads.
#[test]
fn a_thousand_mtls_sessions_on_one_weftd() {
    const SESSIONS: usize = 1000;
    raise_open_files_limit(2 * SESSIONS as u64 + 256);
    let pki = Pki::new("weftd-1000");
    let config = format!(
        r#"{{ transport: {{ unicast: {{ max_sessions: 2000 }}, link: {{ tls: {{
            root_ca_certificate: "{}", listen_certificate: "{}", listen_private_key: "{}",
            enable_mtls: true,
        }} }} }} }}"#,
        pki.ca, pki.server_cert, pki.server_key,
    );
    let tls_port = free_port();
    let tls_endpoint = format!("tls/localhost:{tls_port}");
    let weftd = Weftd::with_config(
        free_port(),
        &config,
        &["-l", &format!("tls/127.0.0.1:{tls_port}")],
    );
    wait_for_port(tls_port);
    let at_rest = threads(weftd.pid());
    let client = || {
        weft::open(Config {
            mode: WhatAmI::Client,
            multicast_scouting: false,
            connect: vec![tls_endpoint.parse().unwrap()],
            tls: pki.connecting(true),
            ..Config::default()
        })
        .expect("a TLS session")
    };
    let started = Instant::now();
    let got: Vec<std::sync::Arc<std::sync::atomic::AtomicBool>> =
        (0..SESSIONS).map(|_| std::sync::Arc::default()).collect();
    let sessions: Vec<(weft::Session, weft::Subscriber)> = got
        .iter()
        .map(|flag| {
            let s = client();
            let flag = flag.clone();
            let sub = s
                .declare_subscriber("many/**", move |_| {
                    flag.store(true, std::sync::atomic::Ordering::SeqCst);
                })
                .unwrap();
            (s, sub)
        })
        .collect();
    eprintln!("{SESSIONS} mTLS sessions opened in {:?}", started.elapsed());
    let loaded = threads(weftd.pid());
    assert!(
        loaded <= at_rest + weft::executor::MAX_IO_THREADS,
        "weftd: {loaded} threads with {SESSIONS} TLS sessions ({at_rest} at rest)"
    );
    // Every session is served: the first one's puts reach each of them (once weftd has
    // every declaration).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let missing = got
            .iter()
            .filter(|g| !g.load(std::sync::atomic::Ordering::SeqCst))
            .count();
        if missing == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{missing} of {SESSIONS} sessions got nothing"
        );
        sessions[0]
            .0
            .put("many/all", b"x", &PutOptions::default())
            .unwrap();
        std::thread::sleep(Duration::from_millis(50));
    }
}
