use super::*;

fn endpoint(text: &str) -> WeftEndpoint {
    text.parse().unwrap()
}

#[test]
fn endpoint_keys_are_split_between_tls_and_quic() {
    let ep = endpoint(
        "quic/127.0.0.1:7447#initial_mtu=1400;mtu_discovery_interval_secs=30;\
         enable_mtls=true;root_ca_certificate_file=/ca.pem",
    );
    let o = QuicOptions::for_endpoint(&ep, &TlsSettings::default()).unwrap();
    assert_eq!(o.initial_mtu, Some(1400));
    assert_eq!(o.mtu_discovery_interval, Some(Duration::from_secs(30)));
    assert!(o.tls.enable_mtls);
    assert_eq!(
        o.tls.root_ca_certificate,
        Some(tls::PemSource::File("/ca.pem".into()))
    );
    for bad in ["initial_mtu=1000", "mtu_discovery_interval_secs=0"] {
        let ep = endpoint(&format!("quic/127.0.0.1:7447#{bad}"));
        let e = QuicOptions::for_endpoint(&ep, &TlsSettings::default()).unwrap_err();
        assert!(
            e.to_string().contains(bad.split('=').next().unwrap()),
            "{e}"
        );
    }
}

#[test]
fn endpoints_asking_for_what_weft_does_not_do_are_refused() {
    for bad in [
        "quic/127.0.0.1:7447#so_sndbuf=65536",
        "quic/127.0.0.1:7447#iface=lo",
        "quic/127.0.0.1:7447#bind=127.0.0.1:0",
        "quic/127.0.0.1:7447?multistream=1",
        "quic/127.0.0.1:7447?mixed_rel=auto",
    ] {
        assert!(bad.parse::<WeftEndpoint>().is_err(), "{bad}");
    }
    for fine in [
        "quic/127.0.0.1:7447?multistream=0",
        "quic/127.0.0.1:7447?multistream=auto;mixed_rel=0",
        "quic/localhost:7447#tls_handshake_timeout_ms=500",
    ] {
        let ep = endpoint(fine);
        assert_eq!(ep.protocol.as_str(), "quic");
    }
}

#[test]
fn a_listener_without_a_certificate_is_refused_naming_it() {
    let ep = endpoint("quic/127.0.0.1:0");
    let e = QuicListener::bind(&ep, &TlsSettings::default()).unwrap_err();
    assert!(e.to_string().contains("listen_certificate"), "{e}");
}
