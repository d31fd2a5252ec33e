//! weftd with a serial listener: a weft client on a serial line (two pseudo-terminals
//! linked by socat) reaches a weft subscriber on TCP through weftd, and the line takes a
//! new session after the first closes.

use std::time::{Duration, Instant};

use weft::{Config, FifoReceiver, PutOptions, Sample, WhatAmI};
use weft_testkit::pty::PtyPair;

mod common;
use common::{weft_client_at, Weftd};

/// Puts `payload` on `key` from `from` until `rx` has it, within 10 s.
fn put_until_received(from: &weft::Session, key: &str, payload: &[u8], rx: &FifoReceiver<Sample>) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.put(key, payload, &PutOptions::default()).unwrap();
        let wait_until = Instant::now() + Duration::from_millis(200);
        while let Some(left) = wait_until.checked_duration_since(Instant::now()) {
            match rx.recv_timeout(left) {
                Ok(s) if s.key_expr == key && s.payload == payload => return,
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert!(
            Instant::now() < deadline,
            "{key} never arrived through weftd"
        );
    }
}

#[test]
fn a_client_on_a_serial_line_reaches_a_tcp_subscriber_through_weftd() {
    let Some(line) = PtyPair::new() else { return };
    let port = weft_testkit::free_port();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .try_init();
    let _weftd = Weftd::logging_to(
        port,
        "{}",
        &["-l", &line.endpoint(&line.a, "")],
        std::path::Path::new("/tmp/weftd-serial.log"),
    );
    let on_tcp = weft_client_at(port);
    let (_sub, at_tcp) = on_tcp.declare_subscriber_channel("ws/**", 64).unwrap();
    for round in 0..2 {
        let on_serial = weft::open(Config {
            mode: WhatAmI::Client,
            multicast_scouting: false,
            connect: vec![line.endpoint(&line.b, "").parse().unwrap()],
            ..Config::default()
        })
        .unwrap_or_else(|e| {
            panic!("a weft client of weftd over the serial line, session {round}: {e:?}")
        });
        let (_s, at_serial) = on_serial.declare_subscriber_channel("ws/back", 64).unwrap();
        let key = format!("ws/serial/{round}");
        put_until_received(&on_serial, &key, b"over the serial line", &at_tcp);
        let big: Vec<u8> = (0..8_000u32).map(|i| (i % 229) as u8).collect();
        put_until_received(&on_serial, &key, &big, &at_tcp);
        put_until_received(&on_tcp, "ws/back", b"back over the line", &at_serial);
        on_serial.close();
    }
}
