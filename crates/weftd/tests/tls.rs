//! weftd as a TLS router: its certificate, key and CA given inline in base64 in its
//! configuration, mTLS on; a weft client and an Eclipse Zenoh client, each with a
//! certificate of the CA, exchange data through it.

use std::time::{Duration, Instant};

use weft::link::tls::{PemSource, TlsSettings};
use weft::{Config, PutOptions, WhatAmI};
use weft_testkit::certs::{base64, Pki};
use weft_testkit::{free_port, ZenohNode};

mod common;
use common::{wait_for_port, Weftd};

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
        tls: TlsSettings {
            root_ca_certificate: Some(PemSource::File(pki.ca.clone().into())),
            connect_certificate: Some(PemSource::File(pki.client_cert.clone().into())),
            connect_private_key: Some(PemSource::File(pki.client_key.clone().into())),
            enable_mtls: true,
            ..TlsSettings::default()
        },
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
