//! weftd as a QUIC router: its certificate and key given inline in base64 in its
//! configuration; an Eclipse Zenoh client and a weft client exchange data through it
//! over QUIC. A QUIC endpoint asking for what weft does not do keeps weftd from starting.

use std::net::UdpSocket;
use std::process::Command;
use std::time::{Duration, Instant};

use weft::config::{PemSource, TlsSettings};
use weft::{Config, PutOptions, WhatAmI};
use weft_testkit::certs::{base64, Pki};
use weft_testkit::{free_port, ZenohNode};

mod common;
use common::Weftd;

/// A UDP port free on loopback right now.
fn free_udp_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn weftd_routes_between_weft_and_zenoh_clients_over_quic() {
    let pki = Pki::new("weftd-quic");
    let read = |path: &str| std::fs::read_to_string(path).unwrap();
    let config = format!(
        r#"{{ transport: {{ link: {{ tls: {{
            listen_certificate_base64: "{}",
            listen_private_key_base64: "{}",
        }} }} }} }}"#,
        base64(&read(&pki.server_cert)),
        base64(&read(&pki.server_key)),
    );
    let quic_endpoint = format!("quic/127.0.0.1:{}", free_udp_port());
    // Started once its TCP port answers: its listeners are all bound by then.
    let _weftd = Weftd::with_config(free_port(), &config, &["-l", &quic_endpoint]);

    let Some(zenoh) = ZenohNode::start(&[
        "--mode",
        "client",
        "--connect",
        &quic_endpoint,
        "--tls-root-ca",
        &pki.ca,
        "--sub",
        "demo/quic/**",
        "--put",
        "demo/zenoh/x",
        "--payload",
        "from zenoh",
        "--repeat",
        "400",
        "--interval",
        "0.05",
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
        connect: vec![quic_endpoint
            .replace("127.0.0.1", "localhost")
            .parse()
            .unwrap()],
        tls: TlsSettings {
            root_ca_certificate: Some(PemSource::File(pki.ca.clone().into())),
            ..TlsSettings::default()
        },
        ..Config::default()
    })
    .expect("a weft client of weftd over QUIC");
    let (_sub, rx) = weft
        .declare_subscriber_channel("demo/zenoh/**", 64)
        .unwrap();
    let s = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("a sample from the Zenoh client through weftd");
    assert_eq!(s.payload, b"from zenoh");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        weft.put("demo/quic/a", b"through weftd", &PutOptions::default())
            .unwrap();
        if let Ok(line) = zenoh.lines.recv_timeout(Duration::from_millis(100)) {
            if line.starts_with('{') {
                let v: serde_json::Value = serde_json::from_str(&line).unwrap();
                assert_eq!(v["payload"], "through weftd");
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "nothing reached the Zenoh client"
        );
    }
}

#[test]
fn weftd_refuses_to_start_on_a_quic_endpoint_asking_for_what_it_does_not_do() {
    for (endpoint, named) in [
        ("quic/127.0.0.1:7447#iface=lo", "iface"),
        ("quic/127.0.0.1:7447?multistream=1", "multistream"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_weftd"))
            .args(["--no-multicast-scouting", "-l", endpoint])
            .output()
            .unwrap();
        assert!(!out.status.success(), "weftd started with {endpoint}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(named), "{endpoint}: {stderr}");
    }
}
